import type { Config } from "../config/schema/index.js";

/** The system prompt of a turn: who the agent is, which session, which model, plus any extra text. */
export function buildSystemPrompt(input: { config: Config; agentId: string; sessionKey: string; modelRef: string; extra?: string | undefined }): string {
  const agent = input.config.agents.list.find((a) => a.id === input.agentId);
  const lines = [
    `You are ${agent?.name ?? input.agentId}, an assistant reached through Switchboard.`,
    `Session: ${input.sessionKey}. Model: ${input.modelRef}. default_model: ${input.config.agents.defaults.model}.`,
    "Answer the person directly and briefly.",
  ];
  if (input.extra?.trim()) lines.push(input.extra.trim());
  return lines.join("\n");
}
