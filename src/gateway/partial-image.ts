// What a gateway core holding only some partitions is given (`cluster.owners: "many"`,
// docs/scale-out.md "Reads in many mode"): its methods then read sessions in SQL and forward writes
// of another gateway's sessions to it (./partial-methods.ts).
import type { PeerCall } from "../cluster/peer-call.js";
import type { PostgresDatabase } from "../state/postgres/database.js";

/** `GatewayCoreDeps.partial`: the schema to read every partition's sessions from, and which sessions this core holds. */
export interface PartialImage {
  /** the schema's database, unfenced (it only reads) */
  database: PostgresDatabase;
  /** whether this core holds the partition of the session under canonical key `sessionKey` */
  holds(sessionKey: string): boolean;
  /** the process's peer call: a per-session write of a session another gateway holds is sent there (./write-forward.ts); absent: refused with NOT_OWNER */
  call?: PeerCall;
}
