import type { DeliveryContext } from "../sessions/session-entry.js";
import type { ChannelAdapter } from "./channel-adapter.js";

/** How often a typing indicator is renewed; platforms drop it after about five seconds. */
const TYPING_INTERVAL_MS = 4_000;

/** The timers the typing loop renews on; tests pass a manual clock's. */
interface TypingTimers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const nodeTimers: TypingTimers = {
  // unref: a typing indicator must not keep the process alive.
  setTimeout: (callback, ms) => setTimeout(callback, ms).unref(),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/**
 * Shows the adapter's typing indicator in `target` as soon as the event loop comes around, and
 * every few seconds, until the returned function is called. A run stopped before that (a model that
 * answers without waiting on anything) shows none: its reply would clear the indicator at once, and
 * each indicator is a platform call. A no-op for adapters without `typing`; a failed indicator is
 * ignored (it is cosmetic, and adapters report their own errors). `mayAct` (the PostgreSQL owner's
 * send guard) is asked before each indicator; false or an error shows none.
 */
export function startTyping(
  adapter: ChannelAdapter | undefined,
  target: DeliveryContext,
  intervalMs = TYPING_INTERVAL_MS,
  timers: TypingTimers = nodeTimers,
  mayAct?: () => Promise<boolean>,
): () => void {
  if (!adapter?.typing) return () => undefined;
  let stopped = false;
  let timer: unknown;
  const typing = adapter.typing.bind(adapter);
  // Through the send guard as every message is: a paused ex-owner shows no indicator either.
  const guarded = async () => {
    if (mayAct && !(await mayAct())) return;
    await typing(target);
  };
  const show = () => void guarded().catch(() => undefined);
  const renew = () => {
    timer = timers.setTimeout(() => {
      if (stopped) return;
      show();
      renew();
    }, intervalMs);
  };
  const first = setImmediate(show);
  renew();
  return () => {
    stopped = true;
    clearImmediate(first);
    timers.clearTimeout(timer);
  };
}
