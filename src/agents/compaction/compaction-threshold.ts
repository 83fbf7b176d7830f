import type { Config } from "../../config/schema/index.js";

/** The context size (estimated tokens) at which a session on a model of `window` tokens is compacted before its next turn. */
export function compactionLimit(config: Pick<Config, "agents">, window: number): number {
  const { threshold, reserveTokens } = config.agents.defaults.compaction;
  return Math.max(0, Math.min(Math.floor(window * threshold), window - reserveTokens));
}
