import { z } from "zod";
import { defineMethod } from "./method.js";

/** How many recent delivery failures the Health view lists. */
const RECENT_FAILURES = 20;

/**
 * `health`: what the control UI's Health view shows: readiness with each part's reason, outbox
 * and inbox depth, recent delivery failures with their reason, and messages and turns per minute
 * over the last hour.
 */
export const healthMethod = defineMethod({
  name: "health",
  params: z.strictObject({}),
  async handle(core) {
    const pending = core.outbox.pending();
    const oldest = pending[0]?.createdAt;
    return {
      ...core.health(),
      outbox: { pending: pending.length, oldestAgeMs: oldest === undefined ? 0 : Math.max(0, core.now() - oldest) },
      inbox: { pending: core.inbox.pending().length },
      failures: core.gate
        .failures()
        .slice(0, RECENT_FAILURES)
        .map((item) => ({
          id: item.id,
          sessionKey: item.sessionKey,
          channel: item.target.channel,
          accountId: item.target.accountId ?? "default",
          to: item.target.to,
          kind: item.kind,
          at: item.updatedAt,
          attempts: item.attempts,
          reason: item.lastError?.reason ?? "unknown",
          message: item.lastError?.message ?? "",
        })),
      activity: core.metrics?.activity() ?? [],
    };
  },
});
