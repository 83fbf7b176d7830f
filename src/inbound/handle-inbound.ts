import type { AgentRuntime } from "../agents/agent-runtime.js";
import type { RunRecord } from "../agents/run-registry.js";
import type { CommandContext } from "../commands/command-context.js";
import { type CommandDispatcher, NO_COMMANDS } from "../commands/command-dispatcher.js";
import { commandNameOf } from "../commands/command-grammar.js";
import type { CapabilitiesOf } from "../delivery/capabilities-of.js";
import type { CommandInteraction } from "../delivery/channel-adapter.js";
import type { Deliver } from "../delivery/delivery-request.js";
import type { Config } from "../config/schema/index.js";
import type { Logger } from "../logger.js";
import { createKeyedMutex } from "../sessions/keyed-mutex.js";
import { z } from "zod";
import { type InboundMessage, InboundMessageSchema, routeInputFromInbound } from "../routing/inbound-message.js";
import { resolveAgentRoute } from "../routing/resolve-route.js";
import { type KeyedSession, createSessionKeyContext } from "../routing/session-key-context.js";
import type { AgentSessionsPool } from "../sessions/agent-sessions.js";
import { ErrorCodes, SwitchboardError } from "../errors.js";
import { resolveAccess } from "./access.js";
import type { Pairing } from "./pairing.js";
import { type Inbox, type InboxWriteError, type PendingInbound, inboundDedupeKey } from "./inbox.js";
import { type CommandChatEvent, createCommandEcho } from "./command-echo.js";
import { type RoutedMessage, commandReplyKey, createAct } from "./inbound-act.js";
import { type InboundFacts, decide } from "./inbound-decision.js";
import { createFinish } from "./inbound-finish.js";
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
 * The one path every channel uses (docs/architecture.md, "Inbound: decide, act, finish"): the
 * durable inbox (dedupe and storage in one write) -> route -> access -> the command, if any ->
 * {@link decide} -> act (answer, or the turn on the session's lane) -> finish (the interaction
 * answered, the inbox entry marked done).
 */
export function createInboundPipeline(deps: InboundDeps) {
  const { config, logger } = deps;
  const commands = deps.commands ?? NO_COMMANDS;
  const keys = createSessionKeyContext(config);
  /** Messages of one session are handled one after another, in arrival order, up to their lane. */
  const ordered = createKeyedMutex();
  const echo = createCommandEcho({ sessions: deps.sessions, logger, ...(deps.emit && { emit: deps.emit }) });
  const finish = createFinish({ inbox: deps.inbox, logger });
  const guard = createSetAside({
    inbox: deps.inbox,
    deliver: deps.deliver,
    logger,
    ...(deps.capabilitiesOf && { capabilitiesOf: deps.capabilitiesOf }),
    route: (entry, message) => route(entry, message).parsed,
  });
  const act = createAct({ ...deps, echo, recordStart: guard.recordStart });

  /** The session of a stored message: the one its client chose, else the routing table's. */
  function route(entry: PendingInbound, message: InboundMessage): KeyedSession {
    if (entry.sessionKey !== undefined) return keys.parse(entry.sessionKey);
    const { parsed, agentId } = resolveAgentRoute(config, routeInputFromInbound(message));
    return { parsed, agentId };
  }

  /** Access first: a sender who may not talk must not move a session's route or labels either. */
  const accessOf = (message: InboundMessage) =>
    resolveAccess(config, message, {
      capabilitiesOf: deps.capabilitiesOf,
      ...(deps.pairing && { paired: deps.pairing.paired }),
    });

  /** What a command handler sees of the message and its sender. */
  function commandContext(routed: RoutedMessage): CommandContext {
    const { message, parsed, agentId, access, interaction } = routed;
    return {
      message,
      sessionKey: parsed,
      agentId,
      sender: {
        talk: access.allowed,
        commands: access.commands,
        owner: access.owner,
        ...(access.gatewayClient && { gatewayClient: true }),
      },
      ...(message.command && { command: message.command }),
      ...(interaction && { privateReply: true }),
    };
  }

  /** The command's outcome, unless the message is a replayed command that already ran (then it is not run again). */
  async function runCommand(routed: RoutedMessage): Promise<Pick<InboundFacts, "outcome" | "alreadyRan">> {
    const { entry, parsed, agentId } = routed;
    if (routed.resumed && (await echo.recorded(agentId, parsed, entry.runId))) return { alreadyRan: true };
    return { outcome: await commands.dispatch(commandContext(routed)) };
  }

  /**
   * The facts {@link decide} reads. A stranger's message asks no command (commands act as they run);
   * a sender who may talk has the message's origin and last route recorded first.
   */
  async function gather(routed: RoutedMessage): Promise<InboundFacts> {
    const { access, message, parsed, agentId, interaction } = routed;
    if (!access.allowed && !access.commands) return { access };
    const { store, lifecycle } = await deps.sessions.forAgent(agentId);
    // In memory at once; its durability rides with the next write this message causes (its turn's,
    // its command's reply, or the inbox's done mark), so no sync is waited for here.
    if (access.allowed)
      void lifecycle
        .recordMetadata(store, parsed, message)
        .catch((err: unknown) => logger.warn({ sessionKey: parsed.key, err }, "session metadata not recorded"));
    const ran = await runCommand(routed);
    const name = interaction && !ran.outcome ? message.command?.name : undefined;
    return { access, ...ran, ...(name !== undefined && commandNameOf(name) === undefined && { unknownNative: name }) };
  }

  /** Decide, act, finish, for a stored and routed message. */
  async function handleRouted(routed: RoutedMessage): Promise<InboundResult> {
    const { entry, message, interaction, parsed } = routed;
    const decision = decide(await gather(routed));
    const acted = await act(routed, decision);
    const finishing = { entry, message, interaction };
    if ("turnDone" in acted) {
      const { done } = await finish.decided(finishing, decision, acted.turnDone);
      return { status: "queued", sessionKey: parsed.key, runId: acted.runId, done: done! };
    }
    await finish.decided(finishing, decision);
    if (decision.kind === "ignore") return { status: "ignored", sessionKey: parsed.key, reason: decision.reason };
    return { status: "command", sessionKey: parsed.key, ...acted };
  }

  /**
   * Handles a stored entry after every earlier message of its session (so `/stop` and the message
   * after it keep their order); a failure is logged and the entry finished, not retried forever.
   */
  async function handleStored(
    entry: PendingInbound,
    message: InboundMessage,
    resumed: boolean,
    interaction?: CommandInteraction,
  ): Promise<InboundResult> {
    try {
      const keyed = route(entry, message);
      return await ordered.run(keyed.parsed.key, () =>
        handleRouted({ entry, message, ...keyed, access: accessOf(message), resumed, interaction }),
      );
    } catch (err) {
      logger.error({ id: entry.id, channel: message.channel, chatId: message.chat.id, err }, "inbound message failed");
      await finish.failed({ entry, message, interaction });
      throw err;
    }
  }

  /** Acknowledges a native command at once (Discord allows 3 s); its answer comes from the finish step. */
  function deferInteraction(interaction: CommandInteraction, message: InboundMessage): void {
    void interaction
      .defer()
      .catch((err: unknown) =>
        logger.error({ channel: message.channel, command: message.command?.name, err }, "native command defer failed"),
      );
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
    // Only a native command has an interaction to answer.
    const interaction = message.command ? options.interaction : undefined;
    if (interaction) deferInteraction(interaction, message);
    const dedupeKey = inboundDedupeKey(message);
    const claim = await deps.inbox.claim(dedupeKey, message, {
      ...(options.sessionKey !== undefined && { sessionKey: options.sessionKey }),
      ...(options.runId !== undefined && { runId: options.runId }),
      ...(interaction && { interactive: true }),
    });
    if (claim.status === "new") return { result: handleStored(claim.entry, message, false, interaction) };
    logger.info({ dedupeKey, handled: claim.status === "done" }, "duplicate inbound message ignored");
    const pending = claim.status === "pending" && { pending: true as const };
    return { result: Promise.resolve({ status: "duplicate", dedupeKey: dedupeKey!, ...pending }) };
  }

  /** Why a stored entry a restart interrupted is not run again, or undefined to replay it. */
  function notReplayed(entry: PendingInbound, message: InboundMessage): string | undefined {
    if (deps.handedOver?.(`${entry.runId}:reply`) || deps.handedOver?.(commandReplyKey(entry))) return "answered";
    // Its answer could only go through the interaction, which ended with the old process.
    if (entry.interactive) {
      logger.warn(
        { id: entry.id, command: message.command?.name },
        "a native command a restart interrupted is not replayed; its sender may run it again",
      );
      return "interactive";
    }
    return undefined;
  }

  /** Replays one interrupted entry, or finishes it without a turn; true when it was replayed. */
  async function resumeOne(entry: PendingInbound): Promise<boolean> {
    const parsed = InboundMessageSchema.safeParse(entry.message);
    if (!parsed.success) {
      logger.error({ id: entry.id, err: parsed.error }, "stored inbound message is unreadable; dropped");
      await finish.dropped(entry);
      return false;
    }
    if (notReplayed(entry, parsed.data)) {
      await finish.dropped(entry);
      return false;
    }
    if (guard.exhausted(entry)) {
      await guard.setAside(entry, parsed.data);
      return false;
    }
    logger.info(
      { id: entry.id, runId: entry.runId, receivedAt: entry.receivedAt },
      "replaying an inbound message a restart interrupted",
    );
    await handleStored(entry, parsed.data, true).catch(() => undefined); // logged in handleStored
    return true;
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
      let replayed = 0;
      for (const entry of deps.inbox.pending()) if (await resumeOne(entry)) replayed++;
      return replayed;
    },

    /** Runs a set-aside message again (its starts counted afresh); undefined when no such entry is set aside. */
    async retry(id: string): Promise<InboundResult | undefined> {
      const entry = await deps.inbox.retry(id);
      if (!entry) return undefined;
      const parsed = InboundMessageSchema.safeParse(entry.message);
      if (!parsed.success) {
        await finish.dropped(entry);
        throw new SwitchboardError(ErrorCodes.INVALID_ARGUMENT, `inbox entry ${id} is unreadable; it was dropped`);
      }
      return handleStored(entry, parsed.data, true);
    },
  };
}
