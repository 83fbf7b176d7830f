// A paused owner sends nothing after it continues (docs/scale-out.md): a SIGCONTed process can run
// a send it had queued before its heartbeat learns the lease is gone, and the database fence guards
// commits, not platform calls. So before every platform send the owner checks, on its own monotonic
// clock, that its lease was renewed less than `leaseTtlMs` (minus a margin) ago.
import { DeliveryError } from "../errors.js";

/** The share of `leaseTtlMs` a renewal stays good for sends: the rest covers clock-rate drift and the send's own time. */
const SAFE_SHARE = 0.8;

/** What {@link createSendGuard} reads and does. */
export interface SendGuardOptions {
  /** when the lease was last taken or renewed, on `clock` (read before that statement went out); undefined when not held */
  renewedAt(): number | undefined;
  /** renews the lease now (one heartbeat); true while it is still this gateway's; throws when the database does not answer */
  renewNow(): Promise<boolean>;
  leaseTtlMs: number;
  /** the lease is gone: the gateway stops as when fenced out */
  onLost(): void;
  /** monotonic ms; default performance.now */
  clock?: () => number;
}

/** Whether a lease renewed at `renewedAt` (on `clock`) is young: renewed less than its safe share of `leaseTtlMs` ago. */
export function leaseYoung(
  renewedAt: number | undefined,
  leaseTtlMs: number,
  clock: () => number = () => performance.now(),
) {
  return renewedAt !== undefined && clock() - renewedAt < leaseTtlMs * SAFE_SHARE;
}

/**
 * Resolves true when a send may go: the lease is young, or a renewal now proves it is still held.
 * False (after `onLost`) when another gateway took it; a retryable DeliveryError when the database
 * cannot say (the send waits for its retry, nothing goes out unconfirmed).
 */
export function createSendGuard(options: SendGuardOptions): () => Promise<boolean> {
  const clock = options.clock ?? (() => performance.now());
  const young = () => leaseYoung(options.renewedAt(), options.leaseTtlMs, clock);
  // Sends that find the lease old at once (after SIGCONT) share one renewal: one heartbeat, not one each.
  let renewing: Promise<boolean> | undefined;
  const renewOnce = () => {
    renewing ??= options.renewNow().finally(() => {
      renewing = undefined;
    });
    return renewing;
  };
  return async () => {
    if (young()) return true;
    if (options.renewedAt() !== undefined) {
      let held: boolean;
      try {
        held = await renewOnce();
      } catch (err) {
        throw new DeliveryError("this gateway could not confirm it still owns its schema; the send waits for a retry", {
          retryable: true,
          reason: "lease_unconfirmed",
          cause: err,
        });
      }
      if (held && young()) return true;
    }
    options.onLost();
    return false;
  };
}
