// The failpoint that SIGKILLs an owner at the statement taking its hand-off rows in and deleting them
// (SB_KILL_AT_HANDOFF_DELETE, src/gateway/handoff-drain.ts), and what a test reads after it fired.
import { mkdtemp } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { Cluster, ClusterGateway } from "./cluster-harness.js";

/** Where the owner is killed: before the statement is sent, or once it committed. */
export type KillAt = "send" | "acked";

/** The gateways' env for the failpoint at `at` (it fires once: its marker file says it did). */
export async function killAtHandoffDelete(at: KillAt): Promise<Record<string, string>> {
  const marker = path.join(await mkdtemp(path.join(os.tmpdir(), "sb-handoff-")), "killed");
  return { SB_KILL_AT_HANDOFF_DELETE: JSON.stringify({ marker, at }) };
}

/**
 * Once `owner` exited: how it exited, how many hand-off rows still wait and how many inbox entries
 * whose key starts with `keyPrefix` were stored (one statement: all rows wait, or none and all stored).
 */
export async function afterKillAtHandoffDelete(c: Cluster, owner: ClusterGateway, keyPrefix: string) {
  const exited = await owner.exited;
  const waiting = await c.query("SELECT id FROM inbound_handoff");
  const stored = await c.query("SELECT key FROM state_rows WHERE tbl = 'inbox' AND starts_with(key, $1)", [keyPrefix]);
  return { exited, counts: [waiting.length, stored.length] };
}

/** What {@link afterKillAtHandoffDelete} finds for three rows killed at `at`. */
export const killedAt = (at: KillAt) => ({
  exited: { code: null, signal: "SIGKILL" },
  counts: at === "send" ? [3, 0] : [0, 3],
});
