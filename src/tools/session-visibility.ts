import type { Config, SessionVisibility } from "../config/schema/index.js";

/** Who triggered a turn and where: what decides how far its session tools reach. */
export interface TurnAuthority {
  agentId: string;
  /** the channel of the message that triggered the turn, when one did */
  channel?: string | undefined;
  /** an owner of that channel, or a gateway client (web chat, CLI) */
  owner: boolean;
}

const DEFAULTS = { owners: "agent", others: "spawned" } as const;

/**
 * The visibility of a turn's session tools (`tools.sessions`): per agent, else per channel, else
 * the defaults; owners `agent`, everyone else `spawned`.
 */
export function resolveVisibility(config: Pick<Config, "tools">, who: TurnAuthority): SessionVisibility {
  const { sessions } = config.tools;
  const tier = who.owner ? "owners" : "others";
  return (
    sessions.agents[who.agentId]?.visibility[tier] ??
    (who.channel !== undefined ? sessions.channels[who.channel.toLowerCase()]?.visibility[tier] : undefined) ??
    sessions.visibility[tier] ??
    DEFAULTS[tier]
  );
}
