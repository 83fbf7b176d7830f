// A failpoint for the hand-off inbox's crash test (test/e2e/cluster-handoff-drain.test.ts): given a
// marker file's path, the first gateway of a cluster that is about to delete a hand-off row it took
// in (its intake durable, the DELETE not yet sent) creates the marker and SIGKILLs itself. The
// marker makes it one kill per cluster: the gateway that takes over drains the row again.
import { writeFileSync } from "node:fs";
import pg from "pg";

/** Arms the failpoint on marker path `marker`; nothing when undefined. */
export function killAtHandoffDelete(marker: string | undefined): void {
  if (!marker) return;
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const query = proto.query;
  proto.query = function (this: unknown, ...args: unknown[]) {
    const text = typeof args[0] === "string" ? args[0] : (args[0] as { text?: string })?.text;
    if (text?.startsWith("DELETE FROM inbound_handoff") && firstToDie(marker)) process.kill(process.pid, "SIGKILL");
    return query.apply(this, args);
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
