// A failpoint for the hand-off inbox's crash tests (test/e2e/cluster-handoff-drain.test.ts). Given
// `{"marker": "<file>", "at": "send" | "acked"}`, the first gateway of a cluster that commits the
// delete of a hand-off row it takes in (the row writer's batch carrying hand-off ids: the same
// statement stores the rows' intake) creates the marker and SIGKILLs itself:
//   "send"   before the statement leaves the process (nothing of it reaches the server)
//   "acked"  once the server answered (the intake and the delete committed, and nobody in the process heard)
// The marker makes it one kill per cluster: the gateway that takes over finds what the kill left.
import { writeFileSync } from "node:fs";
import pg from "pg";

/** The batch's hand-off ids ($20 of the row writer's statement, src/state/postgres/batch-sql.ts). */
const HANDOFF_IDS = 19;

/** Arms the failpoint `spec` (JSON, see above); nothing when undefined. */
export function killAtHandoffDelete(spec: string | undefined): void {
  if (!spec) return;
  const { marker, at } = JSON.parse(spec) as { marker: string; at: "send" | "acked" };
  const die = () => process.kill(process.pid, "SIGKILL");
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const query = proto.query;
  proto.query = function (this: unknown, ...args: unknown[]) {
    const config = args[0] as { name?: string; values?: unknown[][] };
    const deletes = config?.name === "switchboard_batch" && (config.values?.[HANDOFF_IDS]?.length ?? 0) > 0;
    if (!deletes || !firstToDie(marker)) return query.apply(this, args);
    if (at === "send") die();
    return (query.apply(this, args) as Promise<unknown>).then((answer) => {
      die();
      return answer;
    });
  };
}

/** True once per marker: the file is created exclusively. */
function firstToDie(marker: string): boolean {
  try {
    writeFileSync(marker, String(process.pid), { flag: "wx" });
    return true;
  } catch {
    return false;
  }
}
