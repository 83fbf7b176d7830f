import { DeliveryError, SwitchboardError, normalizeAccountId } from "../../src/index.js";
import type { AccountConnection } from "./account-connection.js";
import {
  type SendAnswer,
  type SendParams,
  SendParamsSchema,
  TypingParamsSchema,
  WHATSAPP_SEND,
  WHATSAPP_TYPING,
} from "./holder-calls.js";
import { parseWhatsAppTarget } from "./whatsapp-target.js";

/** Registers a handler peers call by name (`AdapterStartContext.servePeers`); returns its removal. */
export type ServePeers = (name: string, handler: (params: unknown) => Promise<unknown>) => () => void;

/** What the holder's handlers send with. */
export interface HolderHandlerDeps {
  /** the running account, when this gateway holds it (receiving) */
  connectionOf(accountId: string): AccountConnection | undefined;
  /** the adapter's own send on `connection` (quotes, formatting, the number check), waiting for nothing */
  send(connection: AccountConnection, to: string | undefined, message: SendParams["message"]): Promise<string[]>;
}

/** The account's connection, or UNAVAILABLE: the caller's piece stays pending and is retried. */
function heldConnection(deps: HolderHandlerDeps, accountId: string): AccountConnection {
  const connection = deps.connectionOf(normalizeAccountId(accountId));
  if (!connection)
    throw new SwitchboardError("UNAVAILABLE", `this gateway does not hold WhatsApp account "${accountId}"`);
  return connection;
}

/** `whatsapp.send` on the holder: the piece sent on its socket; UNAVAILABLE while that socket is not open. */
async function sendForPeer(deps: HolderHandlerDeps, params: unknown): Promise<SendAnswer> {
  const parsed = SendParamsSchema.safeParse(params);
  if (!parsed.success) throw new SwitchboardError("INVALID_REQUEST", `whatsapp.send: ${parsed.error.message}`);
  const { accountId, to, message } = parsed.data;
  const connection = heldConnection(deps, accountId);
  try {
    return { messageIds: await deps.send(connection, to, message) };
  } catch (err) {
    if (!(err instanceof DeliveryError)) throw err;
    if (err.reason === "not_connected") throw new SwitchboardError("UNAVAILABLE", err.message);
    const { retryable, reason, retryAfterMs } = err;
    return {
      refused: { message: err.message, retryable, reason, ...(retryAfterMs !== undefined && { retryAfterMs }) },
    };
  }
}

/** `whatsapp.typing` on the holder: best effort, as the holder's own typing. */
async function typingForPeer(deps: HolderHandlerDeps, params: unknown): Promise<null> {
  const parsed = TypingParamsSchema.safeParse(params);
  if (!parsed.success) throw new SwitchboardError("INVALID_REQUEST", `whatsapp.typing: ${parsed.error.message}`);
  const { accountId, to } = parsed.data;
  const socket = await heldConnection(deps, accountId).socket(0);
  if (!socket) throw new SwitchboardError("UNAVAILABLE", `WhatsApp account "${accountId}" is not connected`);
  await socket.sendPresenceUpdate("composing", parseWhatsAppTarget(to).jid);
  return null;
}

/**
 * On the global holder (`cluster.owners: "many"`), while its WhatsApp adapter receives: answers the
 * partition cores' `whatsapp.send` and `whatsapp.typing` (docs/whatsapp.md "Many mode"). Returns the removal of both.
 */
export function serveHolderCalls(serve: ServePeers, deps: HolderHandlerDeps): () => void {
  const removals = [
    serve(WHATSAPP_SEND, (params) => sendForPeer(deps, params)),
    serve(WHATSAPP_TYPING, (params) => typingForPeer(deps, params)),
  ];
  return () => {
    for (const remove of removals) remove();
  };
}
