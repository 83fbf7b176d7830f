import { randomUUID } from "node:crypto";
import type { AgentRuntime, ReplyDelivery } from "../agents/agent-runtime.js";
import { routeOf } from "../agents/agent-runtime.js";
import type { RunRecord } from "../agents/run-registry.js";
import { type CommandDispatcher, NO_COMMANDS } from "../commands/command-dispatcher.js";
import { CLIENT_CHANNEL } from "../delivery/channel-adapter.js";
import type { Config } from "../config/schema/index.js";
import type { Logger } from "../logger.js";
import { type InboundMessage, InboundMessageSchema, routeInputFromInbound } from "../routing/inbound-message.js";
import { parseSessionKey } from "../routing/parse-session-key.js";
import { resolveAgentRoute, resolveDefaultAgentId } from "../routing/resolve-route.js";
import type { ParsedSessionKey } from "../routing/session-key.js";
import type { AgentSessionsPool } from "../sessions/agent-sessions.js";
import { ErrorCodes, SwitchboardError } from "../errors.js";
import { type AccessDecision, resolveAccess } from "./access.js";
import { type CommandChatEvent, createCommandEcho } from "./command-echo.js";
import { type InboundDedupe, inboundDedupeKey } from "./inbound-dedupe.js";

/** What became of one inbound message. */
export type InboundResult =
  | { status: "duplicate"; dedupeKey: string }
  | { status: "ignored"; sessionKey: string; reason: string }
  | { status: "command"; sessionKey: string; reply?: string }
  | { status: "queued"; sessionKey: string; runId: string; done: Promise<RunRecord> };

/** Options for messages that do not come from a platform (gateway clients). */
export interface InboundOptions {
  /** skip routing: the session the client chose */
  sessionKey?: string;
  /** the run id (idempotency key) for the turn */
  runId?: string;
}

/** Dependencies of {@link createInboundPipeline}. */
export interface InboundDeps {
  config: Config;
  sessions: AgentSessionsPool;
  runtime: AgentRuntime;
  dedupe: InboundDedupe;
  deliver: (request: ReplyDelivery) => Promise<unknown>;
  commands?: CommandDispatcher;
  /** pushes a command and its reply to the session's clients as `chat` events; default: none */
  emit?: (event: "chat", payload: CommandChatEvent) => void;
  logger: Logger;
}

/**
 * The one path every channel uses: dedupe -> route -> access check -> record origin and last
 * route -> command -> (mention gate) -> the session's lane -> agent run -> reply.
 */
export function createInboundPipeline(deps: InboundDeps) {
  const { config, logger } = deps;
  const commands = deps.commands ?? NO_COMMANDS;
  const echo = createCommandEcho({ sessions: deps.sessions, logger, ...(deps.emit && { emit: deps.emit }) });

  function route(message: InboundMessage, options: InboundOptions): { parsed: ParsedSessionKey; agentId: string } {
    if (options.sessionKey === undefined) {
      const resolved = resolveAgentRoute(config, routeInputFromInbound(message));
      return { parsed: resolved.parsed, agentId: resolved.agentId };
    }
    const parsed = parseSessionKey(options.sessionKey, { defaultAgentId: resolveDefaultAgentId(config), mainKey: config.session.mainKey, scope: config.session.scope });
    if (!parsed) throw new SwitchboardError(ErrorCodes.INVALID_SESSION_KEY, `"${options.sessionKey}" is not a session key; use sessions.list to see the keys.`);
    return { parsed, agentId: "agentId" in parsed ? parsed.agentId : resolveDefaultAgentId(config) };
  }

  function ignore(parsed: ParsedSessionKey, message: InboundMessage, reason: string): InboundResult {
    logger.info({ sessionKey: parsed.key, sender: message.sender.id, reason }, "inbound message not allowed");
    return { status: "ignored", sessionKey: parsed.key, reason };
  }

  return {
    /** Handles one message; a queued turn's `done` settles when its run ends. */
    async handleInbound(raw: unknown, options: InboundOptions = {}): Promise<InboundResult> {
      const message = InboundMessageSchema.parse(raw);
      const dedupeKey = inboundDedupeKey(message);
      if (dedupeKey && !(await deps.dedupe.claim(dedupeKey))) {
        logger.info({ dedupeKey }, "duplicate inbound message ignored");
        return { status: "duplicate", dedupeKey };
      }
      const { parsed, agentId } = route(message, options);
      // Access first: a sender who may not talk must not move a session's route or labels either.
      const access: AccessDecision = resolveAccess(config, message);
      if (!access.allowed && !access.commands) return ignore(parsed, message, access.reason ?? "not-allowed");
      const { store, lifecycle } = await deps.sessions.forAgent(agentId);
      if (access.allowed) await lifecycle.recordMetadata(store, parsed, message);
      const context = { message, sessionKey: parsed, agentId, sender: { talk: access.allowed, commands: access.commands, owner: access.owner } };
      const outcome = await commands.dispatch(context);
      if (outcome) {
        const id = options.runId ?? dedupeKey ?? randomUUID();
        if (!outcome.refused) await echo.record({ parsed, agentId, message, id, ...(outcome.reply !== undefined && { reply: outcome.reply }) });
        const target = routeOf(message);
        // Gateway clients get the reply as the method result and, with every client of the session, as a chat event.
        if (outcome.reply && target && target.channel !== CLIENT_CHANNEL) {
          await deps.deliver({ sessionKey: parsed, target, text: outcome.reply, kind: "reply", idempotencyKey: `${dedupeKey ?? id}:command`, bypassPolicy: true, ...(message.messageId && { replyToMessageId: message.messageId }) });
        }
        return { status: "command", sessionKey: parsed.key, ...(outcome.reply !== undefined && { reply: outcome.reply }) };
      }
      // Running commands does not imply talking: a command user's plain text is not a turn.
      if (!access.allowed) return ignore(parsed, message, access.reason ?? "not-allowed");
      // A reset addressed to the bot (`@bot /new`, `/new@bot`) reaches the lifecycle as plain `/new ...`.
      const reset = commands.resetText?.(context);
      if (access.needsMention && reset === undefined) return { status: "ignored", sessionKey: parsed.key, reason: "not-mentioned" };
      const { runId, done } = deps.runtime.enqueue({
        ...(options.runId && { runId: options.runId }),
        parsed, agentId, message, mayReset: commands.mayReset?.(context) ?? access.commands,
        ...(reset !== undefined && { prompt: reset }),
        provenance: { kind: "channel", channel: message.channel },
      });
      return { status: "queued", sessionKey: parsed.key, runId, done };
    },
  };
}

/** The inbound pipeline. */
export type InboundPipeline = ReturnType<typeof createInboundPipeline>;
