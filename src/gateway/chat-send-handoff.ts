// `chat.send` on a standby (docs/scale-out.md "Inbound on any gateway"): on a relayed WebSocket the
// owner authenticated with this gateway's own token (./relay-reads.ts), a `chat.send` is checked by
// the owner's own handler and stored in the hand-off inbox instead of relayed, so it is answered
// while the owner is paused. The owner takes each row in through its inbound pipeline, under the
// row's dedupe key and the run id the standby answered (./chat-send-intake.ts). A command is
// relayed: its reply is the owner's.
import { storeHandoff } from "../cluster/handoff-sql.js";
import { commandParseOptions } from "../commands/command-dispatcher.js";
import { parseCommand } from "../commands/parse-command.js";
import type { Config } from "../config/schema/index.js";
import type { HandoffTarget } from "../hooks/hook-handoff.js";
import { InboxWriteError, inboundDedupeKey } from "../inbound/inbox.js";
import { INBOX_RETENTION_MS } from "../inbound/inbox-state.js";
import type { InboundOptions } from "../inbound/inbound-types.js";
import type { Logger } from "../logger.js";
import { type InboundMessage, InboundMessageSchema } from "../routing/inbound-message.js";
import { createCoreKeys } from "./core-keys.js";
import { answerWith } from "./dispatch-request.js";
import type { ChatSendRow } from "./chat-send-intake.js";
import { type ChatSendAccepted, type ChatSendCore, chatSend } from "./methods/chat-methods.js";
import { RequestFrameSchema } from "./protocol.js";
import type { StandbyReads } from "./standby-front.js";
import { CLIENT_CHANNEL } from "./webchat-adapter.js";

/**
 * Stores one checked message for the owner under the owner's inbox dedupe key (channel, account,
 * session, run id): a key the owner's inbox or the hand-off inbox knows stores nothing and is
 * `duplicate`, as on the owner. Anything failing (the database away) is an `InboxWriteError`.
 */
async function handOff(target: HandoffTarget, raw: unknown, options: InboundOptions): Promise<ChatSendAccepted> {
  const joined = target.joined();
  if (!joined) throw new InboxWriteError(new Error("this gateway has not joined its cluster yet"));
  const message: InboundMessage = InboundMessageSchema.parse(raw);
  const dedupeKey = inboundDedupeKey(message)!; // chat.send always gives a message id: its run id
  const { sessionKey, runId } = options as Required<Pick<InboundOptions, "sessionKey" | "runId">>;
  const cutoff = (target.now ?? Date.now)() - INBOX_RETENTION_MS;
  const payload: ChatSendRow = { message, sessionKey };
  const row = { kind: "chat-send" as const, dedupeKey, runId, payload };
  const stored = await storeHandoff(joined.pool, joined.schema, { ...row, receivedBy: target.nodeId }, cutoff).catch(
    (err: unknown) => {
      throw new InboxWriteError(err);
    },
  );
  if (stored.status === "new") return { status: "queued", sessionKey, runId };
  return { status: "duplicate", dedupeKey };
}

/** What {@link createStandbyChatSend} needs. */
export interface StandbyChatSendDeps {
  config: Config;
  target: HandoffTarget;
  logger: Logger;
}

/**
 * A standby's `chat.send`: answered here by the owner's handler on a core whose pipeline stores
 * in the hand-off inbox; undefined (relay it) before this gateway joined, and for a command.
 */
export function createStandbyChatSend(deps: StandbyChatSendDeps): StandbyReads {
  const keys = createCoreKeys(deps.config);
  const commands = commandParseOptions(deps.config);
  const core: ChatSendCore = {
    parseKey: keys.parseKey,
    clientChannel: CLIENT_CHANNEL,
    now: deps.target.now ?? Date.now,
    pipeline: { handleInbound: (message, options) => handOff(deps.target, message, options) },
  };
  return {
    serves: (method) => method === chatSend.name,
    async answer(raw, client) {
      const frame = RequestFrameSchema.safeParse(raw);
      if (!frame.success || !deps.target.joined()) return undefined;
      const params = chatSend.params.safeParse(frame.data.params ?? {});
      if (params.success && parseCommand(params.data.message, commands) !== null) return undefined;
      const request = { id: frame.data.id, params: frame.data.params };
      return answerWith(chatSend, core, request, { caller: { client }, logger: deps.logger });
    },
    close: async () => undefined,
  };
}
