import { DeliveryError } from "../errors.js";
import { normalizeAccountId } from "../routing/normalize.js";
import type { DeliveryContext } from "../sessions/session-entry.js";

/**
 * The running account a send goes out on: the one the target names, or the only one running when
 * the target names none. Otherwise a {@link DeliveryError}: retryable while the adapter has not
 * started any account yet, final for an account that is not configured.
 */
export function runningAccount<T>(
  running: ReadonlyMap<string, T>,
  target: DeliveryContext,
  platform: { name: string; channel: string },
): T {
  const wanted = normalizeAccountId(target.accountId);
  const found =
    running.get(wanted) ??
    (target.accountId === undefined && running.size === 1 ? [...running.values()][0] : undefined);
  if (found !== undefined) return found;
  if (running.size === 0)
    throw new DeliveryError(`The ${platform.name} adapter is not running yet.`, {
      retryable: true,
      reason: "not_started",
    });
  throw new DeliveryError(
    `No ${platform.name} account "${wanted}" is running (running: ${[...running.keys()].join(", ")}). Configure it under channels.${platform.channel}.accounts.`,
    { retryable: false, reason: "no_account" },
  );
}

/** Stops every running account at once and forgets them (an adapter's `stop`). */
export async function stopRunningAccounts(running: Map<string, { stop(): Promise<void> }>): Promise<void> {
  const accounts = [...running.values()];
  running.clear();
  await Promise.all(accounts.map((account) => account.stop()));
}
