import { STRINGS } from "../commands/command-strings.js";
import type { PairingControl, PairingResult, PairingScope } from "../commands/pairing-control.js";
import type { Config } from "../config/schema/index.js";
import type { Deliver } from "../delivery/delivery-request.js";
import type { Logger } from "../logger.js";
import type { InboundMessage } from "../routing/inbound-message.js";
import type { ParsedSessionKey } from "../routing/session-key.js";
import { resolveAccountAccess } from "./channel-account.js";
import type { PairingAsk, PairingRequest, PairingStore } from "./pairing-store.js";

/** Dependencies of {@link createPairing}. */
export interface PairingDeps {
  config: Pick<Config, "channels">;
  store: PairingStore;
  deliver: Deliver;
  /** a stored session key back to its parsed form (the DM the code came from) */
  parseKey: (raw: string) => ParsedSessionKey;
  logger: Logger;
  now?: () => number;
}

/** Tells the sender they are in; the outbox keeps the notice through restarts, so it is marked at once. */
async function announce(deps: PairingDeps, request: PairingRequest): Promise<void> {
  try {
    await deps.deliver({
      sessionKey: deps.parseKey(request.sessionKey),
      target: targetOf(request),
      text: STRINGS.pairingApproved,
      kind: "notice",
      idempotencyKey: `pairing:${request.code}:approved`,
      bypassPolicy: true,
    });
  } catch (err) {
    // The channel or account is gone from the config: nobody can carry the notice; the sender is in all the same.
    deps.logger.error({ code: request.code, channel: request.channel, err }, "pairing approval notice not sent");
  }
  await deps.store.announced(request.code);
}

function logDecision(logger: Logger, verdict: string, code: string, by: string, result: PairingResult): void {
  if (result.ok) logger.info({ code, by, sender: result.request.senderId, verdict }, "pairing code decided");
  else logger.warn({ code, by, reason: result.reason, verdict }, "pairing code refused");
}

/** What owners do with codes (`/pair`, `switchboard pairing`): list, approve (and tell the sender), deny. */
function controlOf(deps: PairingDeps): PairingControl {
  const { store, logger } = deps;
  return {
    list: (scope) => store.list(scope),
    async approve(code: string, by: string, scope?: PairingScope): Promise<PairingResult> {
      const result = await store.approve(code, by, scope);
      logDecision(logger, "approved", code, by, result);
      if (result.ok) await announce(deps, result.request);
      return result;
    },
    async deny(code: string, by: string, scope?: PairingScope): Promise<PairingResult> {
      const result = await store.deny(code, by, scope);
      logDecision(logger, "denied", code, by, result);
      return result;
    },
  };
}

/** An unknown sender's DM: a new code and the message that carries it, or silence (logged). */
async function onStranger(deps: PairingDeps, message: InboundMessage, parsed: ParsedSessionKey): Promise<void> {
  const fields = { channel: message.channel, accountId: message.accountId, sender: message.sender.id };
  if (message.beforeConnect) {
    // Backlog the platform hands over at connect (WhatsApp's offline messages): no code, no slot taken.
    deps.logger.info({ ...fields, status: "before-connect" }, "pairing: no code given");
    return;
  }
  const limits = resolveAccountAccess(deps.config, message.channel, message.accountId).pairing;
  const asked = await deps.store.ask(strangerOf(message, parsed), limits);
  const request = codeToSend(asked);
  if (!request) {
    // Silence: a reply to each would let a flood of strangers make the bot send as much as they do.
    deps.logger.info({ ...fields, status: asked.status }, "pairing: no code given");
    return;
  }
  deps.logger.info({ ...fields, code: request.code, expiresAt: request.expiresAt }, "pairing code given");
  const minutes = Math.ceil((request.expiresAt - (deps.now ?? Date.now)()) / 60_000);
  await deps.deliver({
    sessionKey: parsed,
    target: targetOf(request),
    text: STRINGS.pairingCode(message.channel, request.senderId, request.code, minutes),
    kind: "notice",
    idempotencyKey: `pairing:${request.code}:code`,
    bypassPolicy: true,
  });
  await deps.store.codeSent(request.code);
}

/**
 * DM pairing in the gateway: gives an unknown sender a code (one at a time per sender, at most
 * `pairing.maxPending` waiting per account), lets owners approve or deny it, and tells an approved
 * sender through the delivery gate. The decision of who is unknown is `resolveAccess`'s.
 */
export function createPairing(deps: PairingDeps) {
  const { store } = deps;
  return {
    control: controlOf(deps),
    /** True when an owner let this message's sender in on its account. */
    paired: (message: InboundMessage) => store.isPaired(message.channel, message.accountId, message.sender.id),
    onStranger: (message: InboundMessage, parsed: ParsedSessionKey) => onStranger(deps, message, parsed),
    /** Tells the senders approved while no gateway ran (`switchboard pairing approve` on the stored state). */
    async announcePending(): Promise<void> {
      for (const request of store.unannounced()) await announce(deps, request);
    },
  };
}

/** The code to send: a new one, or one whose message a crash kept from the outbox (handed over at the sender's next message). */
function codeToSend(asked: PairingAsk): PairingRequest | undefined {
  if (asked.status === "created") return asked.request;
  if (asked.status === "rate-limited" && asked.request.status === "pending" && !asked.request.codeSent)
    return asked.request;
  return undefined;
}

/** Who asks for a code, and where their DM is. */
const strangerOf = (message: InboundMessage, parsed: ParsedSessionKey) => ({
  channel: message.channel,
  accountId: message.accountId,
  senderId: message.sender.id,
  ...(message.sender.username && { username: message.sender.username }),
  ...(message.sender.name && { name: message.sender.name }),
  chatId: message.chat.id,
  ...(message.chat.threadId && { threadId: message.chat.threadId }),
  sessionKey: parsed.key,
});

const targetOf = (request: PairingRequest) => ({
  channel: request.channel,
  to: request.chatId,
  accountId: request.accountId,
  ...(request.threadId !== undefined && { threadId: request.threadId }),
});

/** DM pairing as {@link createPairing} returns it. */
export type Pairing = ReturnType<typeof createPairing>;
