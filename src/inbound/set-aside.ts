import { routeOf } from "../agents/agent-runtime.js";
import type { CapabilitiesOf } from "../delivery/capabilities-of.js";
import type { Deliver } from "../delivery/delivery-request.js";
import type { Logger } from "../logger.js";
import type { InboundMessage } from "../routing/inbound-message.js";
import type { ParsedSessionKey } from "../routing/session-key.js";
import { fromGatewayClient } from "./access.js";
import type { Inbox, PendingInbound } from "./inbox.js";
import { MAX_STARTS } from "./inbox-rows.js";

/** What the sender of a set-aside message is told, once. */
export const SET_ASIDE_NOTICE =
  "⚠️ Sorry, your message could not be answered: handling it stopped the gateway several times, so it was set aside. The owner can retry it.";

/** Why an entry is set aside after {@link MAX_STARTS} starts. */
const REASON = `its turn did not finish in ${MAX_STARTS} starts (the gateway stopped during it each time)`;

/** Dependencies of {@link createSetAside}. */
export interface SetAsideDeps {
  inbox: Inbox;
  deliver: Deliver;
  capabilitiesOf?: CapabilitiesOf;
  logger: Logger;
  /** the session the message (or stored turn) routes to; throws when it routes nowhere */
  route: (entry: PendingInbound, message: InboundMessage | undefined) => ParsedSessionKey;
}

/** Tells the sender of a set-aside message, once (the notice's key is the entry's). */
async function notify(
  deps: SetAsideDeps,
  entry: PendingInbound,
  message: InboundMessage,
  parsed: ParsedSessionKey,
): Promise<void> {
  const target = routeOf(message);
  // The gateway's own clients get no notice as a chat message; the owner sees it in `switchboard inbox list`.
  if (!target || fromGatewayClient(deps.capabilitiesOf, message)) return;
  await deps
    .deliver({
      sessionKey: parsed,
      target,
      text: SET_ASIDE_NOTICE,
      kind: "notice",
      idempotencyKey: `${entry.dedupeKey ?? entry.runId}:set-aside`,
      ...(message.messageId && { replyToMessageId: message.messageId }),
    })
    .catch((err: unknown) => deps.logger.error({ id: entry.id, err }, "set-aside notice not delivered"));
}

/**
 * The crash-loop guard: a stored message whose turn took the process down {@link MAX_STARTS}
 * times is set aside instead of replayed (a tombstone with its reason), and its sender told once.
 */
export function createSetAside(deps: SetAsideDeps) {
  const { logger } = deps;

  /** Counts a replayed turn's start on disk before it runs; a failed count only risks one more replay. */
  async function recordStart(entry: PendingInbound): Promise<void> {
    await deps.inbox
      .recordStart(entry.id)
      .catch((err: unknown) => logger.error({ id: entry.id, err }, "inbox start count not stored"));
  }

  /**
   * Sets the entry aside and tells its sender (one notice per entry: the key is the entry's). A
   * stored turn (`message` undefined) has no chat to tell: the log and `inbox list` say it.
   */
  async function setAside(entry: PendingInbound, message: InboundMessage | undefined): Promise<void> {
    let parsed: ParsedSessionKey | undefined;
    try {
      parsed = deps.route(entry, message);
    } catch {
      // Routes nowhere now (config changed): still set aside, without a session.
    }
    await deps.inbox.setAside(entry.id, { reason: REASON, ...(parsed && { session: parsed.key }) });
    logger.error(
      { id: entry.id, runId: entry.runId, starts: entry.starts, sessionKey: parsed?.key },
      "an inbound message was set aside: its turn stopped the gateway at every start (switchboard inbox list)",
    );
    if (parsed && message) await notify(deps, entry, message, parsed);
  }

  return {
    recordStart,
    setAside,
    /** True when the entry has had its last start: set it aside rather than replay it. */
    exhausted: (entry: PendingInbound) => entry.starts >= MAX_STARTS,
  };
}
