import { z } from "zod";
import { storedSessionCount } from "../committed-reads.js";
import { defineMethod } from "./method.js";

/** `status`: lanes, runs, outbox, stores and model, as the running gateway sees them (session counts: every partition's). */
export const statusMethod = defineMethod({
  name: "status",
  params: z.strictObject({}),
  async handle(core) {
    const stores = [];
    for (const agentId of core.agentIds()) {
      const { store } = await core.sessions.forAgent(agentId);
      stores.push({
        agentId,
        path: store.path,
        // Holding only some partitions: every partition's sessions, as committed, and how many this core holds.
        sessions: core.partial ? await storedSessionCount(core.partial.database, agentId) : store.size(),
        ...(core.partial && { sessionsHeld: store.size() }),
        corruptMovedTo: store.report.corruptMovedTo,
        migratedKeys: store.report.renamed.length,
      });
    }
    const model = core.resolveModelRef(core.config.agents.defaults.model);
    return {
      gateway: { pid: process.pid, home: core.home, uptimeMs: Math.round(process.uptime() * 1000) },
      model: { default: model, offline: model.startsWith("offline/") },
      lanes: core.lanes.stats(),
      runs: { active: core.runs.active(), recent: core.runs.recent(10) },
      outbox: { pending: core.gate.pending(), failures: core.gate.failures().slice(0, 10) },
      channels: [...core.adapters.keys()],
      mcp: core.mcpStatus(),
      stores,
    };
  },
});
