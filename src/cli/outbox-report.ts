import path from "node:path";
import type { SwitchboardPaths } from "../config/index.js";
import type { StatePort } from "../state/state-port.js";

/** A message the outbox gave up on, as doctor shows it. */
interface FailedDelivery {
  sessionKey: string;
  kind: string;
  to: string;
  at: number;
  reason: string;
  message: string;
}

/** What waits in the outbox and what failed, read from the state without writing (a gateway may run). */
export interface OutboxReport {
  /** messages not delivered yet */
  pending: number;
  /** of those, how many already failed at least once and wait for a retry */
  retrying: number;
  /** how long the oldest pending message has waited */
  oldestPendingAgeMs?: number;
  /** the last error of the oldest retrying message */
  lastError?: string;
  /** finished items that failed, newest first (kept 7 days, at most 500 finished items) */
  failed: FailedDelivery[];
}

/** Reads the outbox table of a read-only `state` (local: `<home>/state/outbox.json` and the journal). */
export async function readOutboxReport(state: StatePort, paths: SwitchboardPaths, now: number): Promise<OutboxReport> {
  const { createOutbox } = await import("../delivery/outbox.js"); // loaded by doctor only (src/cli/main.ts)
  const outbox = await createOutbox({ state, path: path.join(paths.home, "state", "outbox.json") });
  const pending = outbox.pending();
  const retrying = pending.filter((item) => item.attempts > 0);
  const oldest = pending[0];
  const error = retrying[0]?.lastError;
  return {
    pending: pending.length,
    retrying: retrying.length,
    ...(oldest && { oldestPendingAgeMs: now - oldest.createdAt }),
    ...(error && { lastError: `${error.reason}: ${error.message}` }),
    failed: outbox.failures().map((item) => ({
      sessionKey: item.sessionKey,
      kind: item.kind,
      to: `${item.target.channel}:${item.target.to ?? "?"}`,
      at: item.updatedAt,
      reason: item.lastError?.reason ?? "failed",
      message: item.lastError?.message ?? "",
    })),
  };
}
