import { z } from "zod";
import { PRUNE_TARGETS, retentionPlan } from "../../sessions/retention/retention-plan.js";
import { defineMethod } from "./method.js";

/** `sessions.prune`: one retention pass now (`switchboard sessions prune`); lists what it removed, or would. */
export const sessionsPrune = defineMethod({
  name: "sessions.prune",
  params: z.strictObject({
    dryRun: z.boolean().optional().describe("list what would go, remove nothing"),
    olderThanMs: z.number().int().min(1).optional().describe("one age for every target instead of the configured ones"),
    kinds: z
      .array(z.enum(PRUNE_TARGETS))
      .min(1)
      .optional()
      .describe('what to prune, e.g. ["hook"]; default: hook, cron, subagent sessions and archives'),
  }),
  async handle(core, p) {
    const plan = retentionPlan(core.config.session, {
      ...(p.olderThanMs !== undefined && { olderThanMs: p.olderThanMs }),
      ...(p.kinds && { targets: p.kinds }),
    });
    // Every agent's store, not only those a message has opened so far.
    await Promise.all(core.agentIds().map((agentId) => core.sessions.forAgent(agentId)));
    const items = await core.retention.sweep({ plan, dryRun: p.dryRun === true });
    return { dryRun: p.dryRun === true, items };
  },
});
