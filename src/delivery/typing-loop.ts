import type { DeliveryContext } from "../sessions/session-entry.js";
import type { ChannelAdapter } from "./channel-adapter.js";

/** How often a typing indicator is renewed; platforms drop it after about five seconds. */
const TYPING_INTERVAL_MS = 4_000;

/**
 * Shows the adapter's typing indicator in `target` as soon as the event loop comes around, and
 * every few seconds, until the returned function is called. A run stopped before that (a model that
 * answers without waiting on anything) shows none: its reply would clear the indicator at once, and
 * each indicator is a platform call. A no-op for adapters without `typing`; a failed indicator is
 * ignored (it is cosmetic, and adapters report their own errors).
 */
export function startTyping(
  adapter: ChannelAdapter | undefined,
  target: DeliveryContext,
  intervalMs = TYPING_INTERVAL_MS,
): () => void {
  if (!adapter?.typing) return () => undefined;
  const show = () => void adapter.typing!(target).catch(() => undefined);
  const first = setImmediate(show);
  const timer = setInterval(show, intervalMs);
  timer.unref();
  return () => {
    clearImmediate(first);
    clearInterval(timer);
  };
}
