import type { AgentRuntime } from "../agents/agent-runtime.js";
import { routeOf } from "../agents/agent-runtime.js";
import type { RunRecord } from "../agents/run-registry.js";
import type { CommandContext, CommandOutcome } from "../commands/command-context.js";
import { type CommandDispatcher, NO_COMMANDS } from "../commands/command-dispatcher.js";
import { commandNameOf } from "../commands/command-grammar.js";
import { STRINGS } from "../commands/command-strings.js";
import { type CapabilitiesOf, servesGatewayClients } from "../delivery/capabilities-of.js";
import type { CommandInteraction } from "../delivery/channel-adapter.js";
import type { Deliver } from "../delivery/delivery-request.js";
import type { Config } from "../config/schema/index.js";
import type { Logger } from "../logger.js";
import { createKeyedMutex } from "../sessions/keyed-mutex.js";
import { z } from "zod";
import { type InboundMessage, InboundMessageSchema, routeInputFromInbound } from "../routing/inbound-message.js";
import { parseSessionKey } from "../routing/parse-session-key.js";
import { resolveAgentRoute, resolveDefaultAgentId } from "../routing/resolve-route.js";
import type { ParsedSessionKey } from "../routing/session-key.js";
import { notASessionKey } from "../routing/session-key-refs.js";
import type { AgentSessionsPool } from "../sessions/agent-sessions.js";
import { ErrorCodes, SwitchboardError } from "../errors.js";
import { type AccessDecision, resolveAccess } from "./access.js";
import type { Pairing } from "./pairing.js";
import { type Inbox, type InboxWriteError, type PendingInbound, inboundDedupeKey } from "./inbox.js";
import { type CommandChatEvent, createCommandEcho } from "./command-echo.js";
import { createSetAside } from "./set-aside.js";

/** What became of one inbound message. */
export type InboundResult =
  /** `pending`: the same message is stored and not handled yet; it is answered once, by that entry */
  | { status: "duplicate"; dedupeKey: string; pending?: true }
  | { status: "ignored"; sessionKey: string; reason: string }
  | { status: "command"; sessionKey: string; reply?: string }
  | { status: "queued"; sessionKey: string; runId: string; done: Promise<RunRecord> };

/** Options for messages that do not come from a platform (gateway clients). */
export interface InboundOptions {
  /** skip routing: the session the client chose */
  sessionKey?: string;
  /** the run id (idempotency key) for the turn */
  runId?: string;
  /**
   * Where a native command (`message.command`) is answered, when the platform gave one: the
   * pipeline defers it at once and answers through it, not through the channel. Such a message is
   * stored for dedupe but never replayed after a restart, since the interaction ends with the process.
   */
  interaction?: CommandInteraction;
}

/** Dependencies of {@link createInboundPipeline}. */
export interface InboundDeps {
  config: Config;
  sessions: AgentSessionsPool;
  runtime: AgentRuntime;
  inbox: Inbox;
  /** true when the outbox already holds this idempotency key (a replayed turn that had committed) */
  handedOver?: (idempotencyKey: string) => boolean;
  deliver: Deliver;
  commands?: CommandDispatcher;
  /** what each channel's adapter declared (gateway clients); default: every channel is a platform chat */
  capabilitiesOf?: CapabilitiesOf;
  /** DM pairing: who an owner let in, and a code for an unknown sender (`dmPolicy: "pairing"`); default: none */
  pairing?: Pick<Pairing, "paired" | "onStranger">;
  /** pushes a command and its reply to the session's clients as `chat` events; default: none */
  emit?: (event: "chat", payload: CommandChatEvent) => void;
  logger: Logger;
}

/**
 * The one path every channel uses: the durable inbox (dedupe and storage in one write) -> route ->
 * access check -> record origin and last route -> command -> (mention gate) -> the session's lane
 * -> agent run -> reply -> the inbox entry marked done.
 */
export function createInboundPipeline(deps: InboundDeps) {
  const { config, logger } = deps;
  const commands = deps.commands ?? NO_COMMANDS;
  /** Messages of one session are handled one after another, in arrival order, up to their lane. */
  const ordered = createKeyedMutex();
  const echo = createCommandEcho({ sessions: deps.sessions, logger, ...(deps.emit && { emit: deps.emit }) });
  const guard = createSetAside({
    inbox: deps.inbox,
    deliver: deps.deliver,
    logger,
    ...(deps.capabilitiesOf && { capabilitiesOf: deps.capabilitiesOf }),
    route: (entry, message) =>
      route(message, { ...(entry.sessionKey !== undefined && { sessionKey: entry.sessionKey }) }).parsed,
  });

  function route(message: InboundMessage, options: InboundOptions): { parsed: ParsedSessionKey; agentId: string } {
    if (options.sessionKey === undefined) {
      const resolved = resolveAgentRoute(config, routeInputFromInbound(message));
      return { parsed: resolved.parsed, agentId: resolved.agentId };
    }
    const parsed = parseSessionKey(options.sessionKey, {
      defaultAgentId: resolveDefaultAgentId(config),
      mainKey: config.session.mainKey,
      scope: config.session.scope,
    });
    if (!parsed) throw notASessionKey(options.sessionKey);
    return { parsed, agentId: "agentId" in parsed ? parsed.agentId : resolveDefaultAgentId(config) };
  }

  /** The idempotency key of a command's reply: the same for a replay of the same message. */
  const commandReplyKey = (entry: PendingInbound) => `${entry.dedupeKey ?? entry.runId}:command`;

  /** Marks the entry handled; a failure to record it only risks a replay, which the outbox dedupes. */
  async function complete(entry: PendingInbound): Promise<void> {
    await deps.inbox
      .complete(entry.id)
      .catch((err: unknown) => logger.error({ id: entry.id, err }, "inbox entry not marked done; it will be replayed"));
  }

  /** A message that starts nothing (the sender may not talk here): logged, and its entry done. */
  async function ignore(
    entry: PendingInbound,
    parsed: ParsedSessionKey,
    message: InboundMessage,
    reason: string,
  ): Promise<InboundResult> {
    logger.info({ sessionKey: parsed.key, sender: message.sender.id, reason }, "inbound message not allowed");
    await complete(entry);
    return { status: "ignored", sessionKey: parsed.key, reason };
  }

  /** Answers a native command through its interaction; a failing platform is logged, never thrown. */
  async function answer(
    interaction: CommandInteraction,
    message: InboundMessage,
    text: string,
    ephemeral: boolean,
  ): Promise<void> {
    try {
      await interaction.reply(text, { ephemeral });
    } catch (err) {
      logger.error(
        { channel: message.channel, chatId: message.chat.id, command: message.command?.name, err },
        "native command answer failed",
      );
    }
  }

  /** A command's outcome to its sender: through the interaction when there is one, else delivered to the chat. */
  async function answerCommand(
    entry: PendingInbound,
    context: CommandContext,
    outcome: CommandOutcome,
    interaction: CommandInteraction | undefined,
  ): Promise<void> {
    const { message, sessionKey: parsed } = context;
    if (interaction) {
      // An interaction wants an answer even when the command says nothing.
      const text = outcome.reply ?? STRINGS.nativeDone;
      const ephemeral = outcome.refused === true || outcome.ephemeral === true || outcome.reply === undefined;
      return answer(interaction, message, text, ephemeral);
    }
    const target = routeOf(message);
    // Gateway clients get the reply as the method result and, with every client of the session, as a chat event.
    if (outcome.reply && target && !servesGatewayClients(deps.capabilitiesOf, target.channel)) {
      await deps.deliver({
        sessionKey: parsed,
        target,
        text: outcome.reply,
        kind: "reply",
        idempotencyKey: commandReplyKey(entry),
        bypassPolicy: true,
        ...(message.messageId && { replyToMessageId: message.messageId }),
      });
    }
  }

  /** Access, metadata, command or the session's lane, for a stored and routed message. */
  async function handleRouted(
    entry: PendingInbound,
    message: InboundMessage,
    routed: { parsed: ParsedSessionKey; agentId: string },
    resumed: boolean,
    interaction?: CommandInteraction,
  ): Promise<InboundResult> {
    const { parsed, agentId } = routed;
    // Access first: a sender who may not talk must not move a session's route or labels either.
    const access: AccessDecision = resolveAccess(config, message, {
      gatewayClient: servesGatewayClients(deps.capabilitiesOf, message.channel),
      ...(deps.pairing && { paired: deps.pairing.paired }),
    });
    if (!access.allowed && !access.commands) {
      // A stranger's DM reaches no agent and no command; on a pairing account it may earn them a code.
      if (access.pairing && deps.pairing) await deps.pairing.onStranger(message, parsed);
      // Silence would leave a native command spinning; the sender alone learns they may not use it.
      if (interaction) await answer(interaction, message, STRINGS.refusedCommands, true);
      return ignore(entry, parsed, message, access.reason ?? "not-allowed");
    }
    const { store, lifecycle } = await deps.sessions.forAgent(agentId);
    // In memory at once; its durability rides with the next write this message causes (its turn's,
    // its command's reply, or the inbox's done mark), so no sync is waited for here.
    if (access.allowed)
      void lifecycle
        .recordMetadata(store, parsed, message)
        .catch((err: unknown) => logger.warn({ sessionKey: parsed.key, err }, "session metadata not recorded"));
    const context: CommandContext = {
      message,
      sessionKey: parsed,
      agentId,
      sender: { talk: access.allowed, commands: access.commands, owner: access.owner },
      ...(message.command && { command: message.command }),
      ...(interaction && { privateReply: true }),
    };
    // A replayed command that had already run (its lines are in the history) is not run again.
    if (resumed && (await echo.recorded(agentId, parsed, entry.runId))) {
      await complete(entry);
      return { status: "command", sessionKey: parsed.key };
    }
    const outcome = await commands.dispatch(context);
    if (outcome) {
      if (!outcome.refused)
        await echo.record({
          parsed,
          agentId,
          message,
          id: entry.runId,
          ...(outcome.reply !== undefined && { reply: outcome.reply }),
        });
      await answerCommand(entry, context, outcome, interaction);
      await complete(entry);
      return {
        status: "command",
        sessionKey: parsed.key,
        ...(outcome.reply !== undefined && { reply: outcome.reply }),
      };
    }
    if (interaction && message.command && commandNameOf(message.command.name) === undefined) {
      // A native command the platform offered but the core does not know (a stale command menu).
      const reply = STRINGS.unknownCommand(message.command.name);
      await answer(interaction, message, reply, true);
      await complete(entry);
      return { status: "command", sessionKey: parsed.key, reply };
    }
    // Running commands does not imply talking: a command user's plain text is not a turn.
    if (!access.allowed) {
      if (interaction) await answer(interaction, message, STRINGS.refusedCommands, true);
      return ignore(entry, parsed, message, access.reason ?? "not-allowed");
    }
    // A reset addressed to the bot (`@bot /new`, `/new@bot`) reaches the lifecycle as plain `/new ...`.
    const reset = commands.resetText?.(context);
    if (access.needsMention && reset === undefined) {
      if (interaction) await answer(interaction, message, STRINGS.nativeDone, true);
      await complete(entry);
      return { status: "ignored", sessionKey: parsed.key, reason: "not-mentioned" };
    }
    const { runId, done } = deps.runtime.enqueue({
      runId: entry.runId,
      parsed,
      agentId,
      message,
      mayReset: commands.mayReset?.(context) ?? access.commands,
      ...(reset !== undefined && { prompt: reset }),
      // A replay's start is counted on disk before it runs: a turn that kills the process ends up set aside.
      ...(resumed && { resumed: true, onStart: () => guard.recordStart(entry) }),
      provenance: { kind: "channel", channel: message.channel },
      // Session tools act with the sender's authority (docs/tools.md).
      owner: access.owner,
    });
    // A native command that starts a turn (`/new hello`): its answer is the turn's reply, in the chat.
    if (interaction) await answer(interaction, message, STRINGS.nativeTurn, true);
    // The entry is done when the turn has ended (ok, failed, stopped): its reply is in the outbox by then.
    const completed = done.then(async (record) => {
      await complete(entry);
      return record;
    });
    return { status: "queued", sessionKey: parsed.key, runId, done: completed };
  }

  /**
   * Handles a stored entry after every earlier message of its session (so `/stop` and the message
   * after it keep their order); a failure is logged and the entry marked done, not retried forever.
   */
  async function handleStored(
    entry: PendingInbound,
    message: InboundMessage,
    resumed: boolean,
    interaction?: CommandInteraction,
  ): Promise<InboundResult> {
    try {
      const routed = route(message, { ...(entry.sessionKey !== undefined && { sessionKey: entry.sessionKey }) });
      return await ordered.run(routed.parsed.key, () => handleRouted(entry, message, routed, resumed, interaction));
    } catch (err) {
      logger.error({ id: entry.id, channel: message.channel, chatId: message.chat.id, err }, "inbound message failed");
      if (interaction) await answer(interaction, message, STRINGS.nativeFailed, true);
      await complete(entry);
      throw err;
    }
  }

  /** Validates, then stores in the inbox; `result` settles once the message has been handled. */
  async function accept(raw: unknown, options: InboundOptions): Promise<{ result: Promise<InboundResult> }> {
    const checked = InboundMessageSchema.safeParse(raw);
    if (!checked.success)
      throw new SwitchboardError(
        ErrorCodes.INVALID_ARGUMENT,
        `not an inbound message: ${z.prettifyError(checked.error)}`,
      );
    const message = checked.data;
    // Only a native command has an interaction to answer; acknowledged at once (Discord allows 3 s).
    const interaction = message.command ? options.interaction : undefined;
    if (interaction)
      void interaction
        .defer()
        .catch((err: unknown) =>
          logger.error(
            { channel: message.channel, command: message.command?.name, err },
            "native command defer failed",
          ),
        );
    const dedupeKey = inboundDedupeKey(message);
    const claim = await deps.inbox.claim(dedupeKey, message, {
      ...(options.sessionKey !== undefined && { sessionKey: options.sessionKey }),
      ...(options.runId !== undefined && { runId: options.runId }),
      ...(interaction && { interactive: true }),
    });
    if (claim.status !== "new") {
      logger.info({ dedupeKey, handled: claim.status === "done" }, "duplicate inbound message ignored");
      return {
        result: Promise.resolve({
          status: "duplicate",
          dedupeKey: dedupeKey!,
          ...(claim.status === "pending" && { pending: true as const }),
        }),
      };
    }
    return { result: handleStored(claim.entry, message, false, interaction) };
  }

  return {
    /**
     * Stores the message in the inbox (one acknowledged write, with its dedupe key), then handles
     * it; a queued turn's `done` settles when its run ends. Rejects with {@link InboxWriteError}
     * when the message could not be stored: the adapter must not acknowledge it to the platform.
     */
    async handleInbound(raw: unknown, options: InboundOptions = {}): Promise<InboundResult> {
      return (await accept(raw, options)).result;
    },

    /**
     * What adapters' sinks call: resolves as soon as the message is stored (the platform may then be
     * told it arrived), with `result` settling once it has been handled. Rejects like `handleInbound`.
     */
    accept(raw: unknown, options: InboundOptions = {}): Promise<{ result: Promise<InboundResult> }> {
      return accept(raw, options);
    },

    /**
     * Replays the messages a restart interrupted, oldest first, before new traffic: a turn whose
     * reply already reached the outbox is only marked done; any other is run again (same run id).
     */
    async resume(): Promise<number> {
      const entries = deps.inbox.pending();
      let replayed = 0;
      for (const entry of entries) {
        const parsed = InboundMessageSchema.safeParse(entry.message);
        if (!parsed.success) {
          logger.error({ id: entry.id, err: parsed.error }, "stored inbound message is unreadable; dropped");
          await complete(entry);
          continue;
        }
        if (deps.handedOver?.(`${entry.runId}:reply`) || deps.handedOver?.(commandReplyKey(entry))) {
          await complete(entry);
          continue;
        }
        if (entry.interactive) {
          // Its answer could only go through the interaction, which ended with the old process.
          logger.warn(
            { id: entry.id, command: parsed.data.command?.name },
            "a native command a restart interrupted is not replayed; its sender may run it again",
          );
          await complete(entry);
          continue;
        }
        if (guard.exhausted(entry)) {
          await guard.setAside(entry, parsed.data);
          continue;
        }
        logger.info(
          { id: entry.id, runId: entry.runId, receivedAt: entry.receivedAt },
          "replaying an inbound message a restart interrupted",
        );
        replayed++;
        await handleStored(entry, parsed.data, true).catch(() => undefined); // logged in handleStored
      }
      return replayed;
    },

    /** Runs a set-aside message again (its starts counted afresh); undefined when no such entry is set aside. */
    async retry(id: string): Promise<InboundResult | undefined> {
      const entry = await deps.inbox.retry(id);
      if (!entry) return undefined;
      const parsed = InboundMessageSchema.safeParse(entry.message);
      if (!parsed.success) {
        await complete(entry);
        throw new SwitchboardError(ErrorCodes.INVALID_ARGUMENT, `inbox entry ${id} is unreadable; it was dropped`);
      }
      return handleStored(entry, parsed.data, true);
    },
  };
}
