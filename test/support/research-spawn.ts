// The announce scenario every channel's end-to-end tests run: agent main spawns agent worker on
// "research X" and answers "on it"; the worker finds the answer and announces it.
import { createScriptedModel } from "../fakes/scripted-model.js";

/** The announce's first line, Status and Result, as the chat shows it. */
export const RESEARCH_ANNOUNCE = /^Sub-agent "research"\n\nStatus: success\n\nResult:\nX is the 24th letter\./;

/** The models (`test/main`, `test/worker`) and the agents config of the scenario, fresh for each test. */
export function researchSpawn() {
  const main = createScriptedModel([
    { toolCalls: [{ name: "sessions_spawn", input: { task: "research X", agentId: "worker", label: "research" } }] },
    { text: "on it" },
  ]);
  const worker = createScriptedModel([
    { text: "X is a letter." },
    { text: "- **Result:** X is the 24th letter.\n- **Notes:** found quickly" },
  ]);
  return {
    models: { "test/main": main, "test/worker": worker },
    agents: {
      list: [
        { id: "main", default: true, model: "test/main", subagents: { allowAgents: ["worker"] } },
        { id: "worker", model: "test/worker" },
      ],
    },
  };
}
