import { z } from "zod";
import type { CommandInteraction } from "../delivery/channel-adapter.js";
import { ErrorCodes, SwitchboardError } from "../errors.js";
import { type InboundMessage, InboundMessageSchema } from "../routing/inbound-message.js";
import { type InboxWriteError, inboundDedupeKey } from "./inbox.js";
import { decideBeforeForward } from "./decide-before-forward.js";
import { handleStored } from "./inbound-handle.js";
import { routedSessionOf } from "./inbound-route.js";
import { type SessionFilter, resumePending, retrySetAside } from "./inbound-resume.js";
import type { InboundDeps, InboundOptions, InboundResult } from "./inbound-types.js";
import { type Pipeline, wirePipeline } from "./inbound-wiring.js";

export type { InboundDeps, InboundOptions, InboundResult } from "./inbound-types.js";

/** Acknowledges a native command at once (Discord allows 3 s); its answer comes from the finish step. */
function deferInteraction(p: Pipeline, interaction: CommandInteraction, message: InboundMessage): void {
  void interaction
    .defer()
    .catch((err: unknown) =>
      p.logger.error({ channel: message.channel, command: message.command?.name, err }, "native command defer failed"),
    );
}

/** Validates, then stores in the inbox; `result` settles once the message has been handled. */
async function accept(p: Pipeline, raw: unknown, options: InboundOptions): Promise<{ result: Promise<InboundResult> }> {
  const checked = InboundMessageSchema.safeParse(raw);
  if (!checked.success)
    throw new SwitchboardError(
      ErrorCodes.INVALID_ARGUMENT,
      `not an inbound message: ${z.prettifyError(checked.error)}`,
    );
  const message = checked.data;
  // Only a native command has an interaction to answer.
  const interaction = message.command ? options.interaction : undefined;
  if (interaction) deferInteraction(p, interaction, message);
  const dedupeKey = inboundDedupeKey(message);
  // Routed before it is stored (routing reads only the config and the message): the row knows its session.
  const session = options.sessionKey === undefined ? routedSessionOf(p.deps.config, message) : undefined;
  const deciding = options.access ? undefined : decideBeforeForward(p, message, options.sessionKey ?? session);
  const decided = options.access ? { access: options.access, outcome: options.outcome } : deciding && (await deciding);
  const claim = await p.deps.inbox.claim(dedupeKey, message, {
    ...(options.sessionKey !== undefined && { sessionKey: options.sessionKey }),
    ...(session !== undefined && { session }),
    ...(options.runId !== undefined && { runId: options.runId }),
    ...(interaction && { interactive: true }),
    ...(decided && { access: decided.access }),
    ...(decided?.outcome && { outcome: decided.outcome }),
  });
  if (claim.status === "new" && options.storeOnly) return { result: Promise.resolve({ status: "stored" as const }) };
  if (claim.status === "new") return { result: handleStored(p, claim.entry, message, false, interaction) };
  if (claim.status === "forwarded" && !claim.repeat)
    return { result: Promise.resolve({ status: "forwarded", sessionKey: claim.sessionKey, runId: claim.runId }) };
  p.logger.info({ dedupeKey, handled: claim.status === "done" }, "duplicate inbound message ignored");
  const pending = (claim.status === "pending" || claim.status === "forwarded") && { pending: true as const };
  return { result: Promise.resolve({ status: "duplicate", dedupeKey: dedupeKey!, ...pending }) };
}

/**
 * Lets a stored message's handling go on without waiting for it (an adapter's sink, a handed-off
 * chat.send): `handled` gets its status; a failure is the pipeline's to log, so it is dropped here
 * rather than left an unhandled rejection.
 */
export function handlingGoesOn(
  accepted: { result: Promise<InboundResult> },
  handled: (status: InboundResult["status"]) => void = () => undefined,
): void {
  accepted.result.then(
    (result) => handled(result.status),
    () => undefined,
  );
}

/**
 * The one path every channel uses (docs/architecture.md, "Inbound: decide, act, finish"): the
 * durable inbox (dedupe and storage in one write) -> route -> access -> the command, if any ->
 * decide -> act (answer, or the turn on the session's lane) -> finish (the interaction answered,
 * the inbox entry marked done).
 */
export function createInboundPipeline(deps: InboundDeps) {
  const p = wirePipeline(deps);
  return {
    /**
     * Stores the message in the inbox (one acknowledged write, with its dedupe key), then handles
     * it; a queued turn's `done` settles when its run ends. Rejects with {@link InboxWriteError}
     * when the message could not be stored: the adapter must not acknowledge it to the platform.
     */
    handleInbound: async (raw: unknown, options: InboundOptions = {}): Promise<InboundResult> =>
      (await accept(p, raw, options)).result,
    /**
     * What adapters' sinks call: resolves as soon as the message is stored (the platform may then be
     * told it arrived), with `result` settling once it has been handled. Rejects like `handleInbound`.
     */
    accept: (raw: unknown, options: InboundOptions = {}) => accept(p, raw, options),
    /**
     * Replays the messages a restart interrupted, oldest first, before new traffic; with `only`,
     * just those of the sessions it takes (a partition adopted while the core runs).
     */
    resume: (only?: SessionFilter): Promise<number> => resumePending(p, only),
    /** Runs a set-aside message again; undefined when no such entry is set aside. */
    retry: (id: string) => retrySetAside(p, id),
  };
}
