// The one refusal of a write only the global holder may make (docs/scale-out.md "A fence per
// partition on every write"): the state port and the fenced database throw it; a store that may meet
// it (the inbox's prune of old handled keys) tells it apart from a failure.
import { ErrorCodes, SwitchboardError } from "../errors.js";

/**
 * A write of a row of no session (cron, pairing, channel state, a global prune) on a partition
 * owner that does not hold the global lease (`cluster.owners: "many"`, docs/scale-out.md "A fence
 * per partition on every write"): refused before it is sent. `what` names the row or the write.
 */
export class GlobalOnlyWriteError extends SwitchboardError {
  constructor(what: string) {
    super(
      ErrorCodes.INVALID_ARGUMENT,
      `${what}: rows of no session are written by the global holder only (the gateway holding schema:writer); this gateway holds partitions, not the global lease`,
    );
    this.name = "GlobalOnlyWriteError";
  }
}

/**
 * A write of a row of a partition this port does not hold (now): another gateway's, or one being
 * evicted (docs/scale-out.md "Partitions moved, not reopened"). A store's prune skips such a row:
 * its next holder keeps or prunes it.
 */
export class NotHeldError extends SwitchboardError {
  constructor(name: string, key: string, part: number, shown: string) {
    super(
      ErrorCodes.INVALID_ARGUMENT,
      `state table "${name}": row "${key}" belongs to partition ${part}, not one of the partitions this port holds (${shown}); only the gateway holding partition ${part} writes it`,
    );
    this.name = "NotHeldError";
  }
}

/** Whether a store's prune may skip a row it was refused: a row of no session, or of a partition not held now. */
export const skippedByPrune = (err: unknown): boolean =>
  err instanceof GlobalOnlyWriteError || err instanceof NotHeldError;
