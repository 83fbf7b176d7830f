import { z } from "zod";
import { defineMethod } from "./method.js";

/** `status`: lanes, runs, outbox, stores and model, as the running gateway sees them. */
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
        sessions: store.size(),
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
