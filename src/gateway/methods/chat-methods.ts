import { randomUUID } from "node:crypto";
import { z } from "zod";
import type { InboundOptions, InboundResult } from "../../inbound/inbound-types.js";
import type { InboundMessageSchema } from "../../routing/inbound-message.js";
import { transcriptRef } from "../../sessions/agent-sessions.js";
import type { GatewayCore } from "../gateway-core.js";
import { GatewayError, GatewayErrorCodes } from "../protocol.js";
import { defineMethod } from "./method.js";
import type { SessionReadCore } from "./read-core.js";

/** The session gateway clients talk to when they name none. */
const DEFAULT_CLIENT_SESSION = "main";

/** `chat.history`: a session's transcript, newest `limit` messages, paging backwards with `cursor`. */
export const chatHistory = defineMethod({
  name: "chat.history",
  params: z.strictObject({
    sessionKey: z.string().trim().min(1).default(DEFAULT_CLIENT_SESSION),
    limit: z.number().int().min(1).max(1000).default(200),
    includeTools: z.boolean().default(false),
    cursor: z.string().min(1).optional(),
  }),
  async handle(core: SessionReadCore, p) {
    const { parsed, agentId } = core.parseKey(p.sessionKey);
    const { store, transcripts } = await core.sessions.forAgent(agentId);
    const entry = store.get(parsed.key);
    if (!entry) return { sessionKey: parsed.key, messages: [], hasMore: false };
    const page = await transcripts.readTail(transcriptRef(entry), {
      limit: p.limit,
      includeTools: p.includeTools,
      ...(p.cursor && { cursor: p.cursor }),
    });
    return { sessionKey: parsed.key, sessionId: entry.sessionId, ...page };
  },
});

/** What `chat.send` learns of a message it hands in: the pipeline's result (a queued turn's end is not awaited). */
export type ChatSendAccepted =
  | Exclude<InboundResult, { status: "queued" }>
  | { status: "queued"; sessionKey: string; runId: string };

/**
 * What `chat.send` takes of a core: the owner's own, or a standby's whose pipeline stores the
 * message in the hand-off inbox for the owner (../chat-send-handoff.ts). One handler, one answer.
 * An owner on a cluster waits first for the hand-off pass (`beforeOwnInbound`), so a `chat.send`
 * a standby stored before runs before it; a standby has none.
 */
export interface ChatSendCore
  extends Pick<GatewayCore, "parseKey" | "clientChannel" | "now">,
    Partial<Pick<GatewayCore, "beforeOwnInbound">> {
  pipeline: {
    handleInbound(message: z.input<typeof InboundMessageSchema>, options: InboundOptions): Promise<ChatSendAccepted>;
  };
}

/**
 * `chat.send`: a message from a gateway client (the terminal or web chat, acting as the owner),
 * through the same inbound pipeline as every channel. Acks at once; the reply arrives as a
 * `chat.delivery` event (delivered like any chat's), and `agent.wait` waits for the run's end.
 */
export const chatSend = defineMethod({
  name: "chat.send",
  params: z.strictObject({
    sessionKey: z.string().trim().min(1).default(DEFAULT_CLIENT_SESSION),
    message: z.string().refine((m) => m.trim() !== "", "message required"),
    idempotencyKey: z.string().trim().min(1).max(200).optional(),
  }),
  async handle(core: ChatSendCore, p, caller) {
    const { parsed } = core.parseKey(p.sessionKey);
    const runId = p.idempotencyKey ?? randomUUID();
    await core.beforeOwnInbound?.();
    const result = await core.pipeline.handleInbound(
      {
        channel: core.clientChannel,
        accountId: "default",
        chat: { type: "direct", id: parsed.key },
        sender: { id: caller.client, name: "owner" },
        messageId: runId,
        text: p.message,
        timestamp: core.now(),
      },
      { sessionKey: parsed.key, runId },
    );
    switch (result.status) {
      case "queued":
      case "forwarded":
        return { runId: result.runId, sessionKey: result.sessionKey, status: "started" };
      case "command":
        return { runId, sessionKey: result.sessionKey, status: "command", reply: result.reply };
      case "duplicate":
        return { runId, sessionKey: parsed.key, status: "duplicate" };
      default:
        throw new GatewayError(
          GatewayErrorCodes.INVALID_REQUEST,
          `message not accepted: ${"reason" in result ? result.reason : result.status}`,
        );
    }
  },
});

/**
 * `chat.abort`: stops the session's running turn (or one run) and clears its queue. An owner on a
 * cluster waits first for the hand-off pass and the handling of what it took in (up to the
 * session's queue), so a `chat.send` a standby stored before the abort is aborted with the rest.
 */
export const chatAbort = defineMethod({
  name: "chat.abort",
  params: z.strictObject({
    sessionKey: z.string().trim().min(1).default(DEFAULT_CLIENT_SESSION),
    runId: z.string().min(1).optional(),
  }),
  async handle(core, p) {
    const { parsed } = core.parseKey(p.sessionKey);
    await core.beforeOwnAbort?.();
    if (p.runId) return { ok: true, aborted: core.runs.abort(p.runId) ? [p.runId] : [], cleared: 0 };
    const { runIds, cleared } = core.runtime.abortSession(parsed.key);
    return { ok: true, aborted: runIds, cleared };
  },
});
