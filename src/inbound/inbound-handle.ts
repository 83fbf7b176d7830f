import type { CommandContext } from "../commands/command-context.js";
import { commandNameOf } from "../commands/command-grammar.js";
import type { CommandInteraction } from "../delivery/channel-adapter.js";
import type { InboundMessage } from "../routing/inbound-message.js";
import { resolveAccess } from "./access.js";
import type { PendingInbound } from "./inbox.js";
import type { RoutedMessage } from "./inbound-act.js";
import { type InboundFacts, decide } from "./inbound-decision.js";
import { routeStored } from "./inbound-route.js";
import type { InboundResult } from "./inbound-types.js";
import type { Pipeline } from "./inbound-wiring.js";

/** Access first: a sender who may not talk must not move a session's route or labels either. */
export function accessOf(p: Pipeline, message: InboundMessage) {
  return resolveAccess(p.deps.config, message, {
    capabilitiesOf: p.deps.capabilitiesOf,
    ...(p.deps.pairing && { paired: p.deps.pairing.paired }),
  });
}

/** What a command handler sees of the message and its sender. */
export function commandContext(
  routed: Pick<RoutedMessage, "message" | "parsed" | "agentId" | "access" | "interaction">,
): CommandContext {
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
async function runCommand(p: Pipeline, routed: RoutedMessage): Promise<Pick<InboundFacts, "outcome" | "alreadyRan">> {
  const { entry, parsed, agentId } = routed;
  if (routed.resumed && (await p.echo.recorded(agentId, parsed, entry.runId))) return { alreadyRan: true };
  // Run by the gateway that received it (`/pair` in `cluster.owners: "many"`): its outcome came with it.
  if (entry.outcome) return { outcome: entry.outcome };
  return { outcome: await p.commands.dispatch(commandContext(routed)) };
}

/**
 * The facts {@link decide} reads. A stranger's message asks no command (commands act as they run);
 * a sender who may talk has the message's origin and last route recorded first.
 */
async function gather(p: Pipeline, routed: RoutedMessage): Promise<InboundFacts> {
  const { access, message, parsed, agentId, interaction } = routed;
  if (!access.allowed && !access.commands) return { access };
  const { store, lifecycle } = await p.deps.sessions.forAgent(agentId);
  // In memory at once; its durability rides with the next write this message causes (its turn's,
  // its command's reply, or the inbox's done mark), so no sync is waited for here.
  if (access.allowed)
    void lifecycle
      .recordMetadata(store, parsed, message)
      .catch((err: unknown) => p.logger.warn({ sessionKey: parsed.key, err }, "session metadata not recorded"));
  const ran = await runCommand(p, routed);
  const name = interaction && !ran.outcome ? message.command?.name : undefined;
  return { access, ...ran, ...(name !== undefined && commandNameOf(name) === undefined && { unknownNative: name }) };
}

/** Decide, act, finish, for a stored and routed message. */
async function handleRouted(p: Pipeline, routed: RoutedMessage): Promise<InboundResult> {
  const { entry, message, interaction, parsed } = routed;
  const decision = decide(await gather(p, routed));
  const acted = await p.act(routed, decision);
  const finishing = { entry, message, interaction };
  if ("turnDone" in acted) {
    const { done } = await p.finish.decided(finishing, decision, acted.turnDone);
    return { status: "queued", sessionKey: parsed.key, runId: acted.runId, done: done! };
  }
  await p.finish.decided(finishing, decision);
  if (decision.kind === "ignore") return { status: "ignored", sessionKey: parsed.key, reason: decision.reason };
  return { status: "command", sessionKey: parsed.key, ...acted };
}

/**
 * Handles a stored entry after every earlier message of its session (so `/stop` and the message
 * after it keep their order); a failure is logged and the entry finished, not retried forever.
 */
export async function handleStored(
  p: Pipeline,
  entry: PendingInbound,
  message: InboundMessage,
  resumed: boolean,
  interaction?: CommandInteraction,
  followers?: RoutedMessage["followers"],
): Promise<InboundResult> {
  try {
    const keyed = routeStored(p.deps.config, p.keys, entry, message);
    // Decided by the gateway that received it, when it was forwarded here (`cluster.owners: "many"`).
    const access = entry.access ?? accessOf(p, message);
    return await p.ordered.run(keyed.parsed.key, () =>
      handleRouted(p, { entry, message, ...keyed, access, resumed, interaction, ...(followers && { followers }) }),
    );
  } catch (err) {
    p.logger.error({ id: entry.id, channel: message.channel, chatId: message.chat.id, err }, "inbound message failed");
    await p.finish.failed({ entry, message, interaction });
    throw err;
  }
}
