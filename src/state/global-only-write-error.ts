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
