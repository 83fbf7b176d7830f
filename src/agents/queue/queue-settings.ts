import type { Config } from "../../config/schema/index.js";
import type { QueueConfig, QueueOverride } from "../../config/schema/session.js";
import type { Logger } from "../../logger.js";
import type { SessionEntry } from "../../sessions/session-entry.js";

/** How one session answers messages that arrive while its turn runs, every field resolved. */
export interface QueueSettings {
  mode: NonNullable<QueueOverride["mode"]>;
  debounceMs: number;
  cap: number;
  overflow: NonNullable<QueueOverride["overflow"]>;
  /** where the mode came from, as `/queue` shows it */
  source: "session" | "agent" | "channel" | "default";
}

/** What the settings of one message's session depend on. */
export interface QueueScope {
  agentId: string;
  /** the message's channel and account; none for turns without a message */
  channel?: string | undefined;
  accountId?: string | undefined;
  /** the session's entry (its `/queue` override) */
  entry?: Pick<SessionEntry, "queueMode"> | undefined;
}

/** A channel section as far as its deprecated `debounceMs` goes (WhatsApp's, top level or per account). */
type LegacySection = { debounceMs?: unknown; accounts?: Record<string, { debounceMs?: unknown } | undefined> };

/**
 * The deprecated `channels.<channel>.debounceMs` (WhatsApp's, before `session.queue`): a positive
 * value reads as `{ mode: "collect", debounceMs }` for that channel, under what
 * `session.queue.channels.<channel>` sets itself.
 */
function legacyDebounce(config: Config, channel: string, accountId?: string): QueueOverride {
  const section = (config.channels as Record<string, LegacySection | undefined>)[channel];
  const own = accountId === undefined ? undefined : section?.accounts?.[accountId]?.debounceMs;
  const value = own ?? section?.debounceMs;
  return typeof value === "number" && value > 0 ? { mode: "collect", debounceMs: value } : {};
}

/** Logs once, at start, each channel section that still sets the deprecated `debounceMs`. */
export function warnLegacyDebounce(config: Config, logger: Logger): void {
  for (const [channel, section] of Object.entries(config.channels as Record<string, LegacySection | undefined>)) {
    const accounts = Object.entries(section?.accounts ?? {}).filter(([, a]) => a?.debounceMs !== undefined);
    if (section?.debounceMs === undefined && accounts.length === 0) continue;
    logger.warn(
      { channel, path: `channels.${channel}.debounceMs`, use: `session.queue.channels.${channel}` },
      `channels.${channel}.debounceMs is deprecated: it is read as session.queue.channels.${channel} { mode: "collect", debounceMs } (docs/config.md); move it there`,
    );
  }
}

/**
 * `session.queue` for one session, field by field: the session's `/queue` mode, then the agent's
 * override, then the channel's (over the deprecated channel `debounceMs`), then the defaults.
 */
export function resolveQueueSettings(config: Config, scope: QueueScope): QueueSettings {
  const queue: QueueConfig = config.session.queue;
  const byChannel: QueueOverride | undefined =
    scope.channel === undefined
      ? undefined
      : { ...legacyDebounce(config, scope.channel, scope.accountId), ...queue.channels[scope.channel] };
  const byAgent = queue.agents[scope.agentId];
  const pick = <K extends keyof QueueOverride>(field: K) => byAgent?.[field] ?? byChannel?.[field];
  const own = scope.entry?.queueMode;
  const source = own ? "session" : byAgent?.mode ? "agent" : byChannel?.mode ? "channel" : "default";
  return {
    mode: own ?? pick("mode") ?? queue.mode,
    debounceMs: pick("debounceMs") ?? queue.debounceMs,
    cap: pick("cap") ?? queue.cap,
    overflow: pick("overflow") ?? queue.overflow,
    source,
  };
}
