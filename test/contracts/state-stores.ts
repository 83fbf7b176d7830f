// The stores the state contract drives, built on one port exactly as the gateway builds them: a
// session store, the inbox and the outbox. Shared by the contract suite and its crash child, so
// both read and write the same tables.
import path from "node:path";
import { createOutbox } from "../../src/delivery/outbox.js";
import { createInbox, inboundDedupeKey } from "../../src/inbound/inbox.js";
import { createMemoryLogger } from "../../src/logger.js";
import { type InboundMessage, InboundMessageSchema } from "../../src/routing/index.js";
import { createSessionStore } from "../../src/sessions/session-store.js";
import type { StatePort } from "../../src/state/state-port.js";

/** Opens the three stores on `state`, with their local files under `dir` (as under `$SWITCHBOARD_HOME`). */
export async function openContractStores(state: StatePort, dir: string) {
  const logger = createMemoryLogger();
  const sessions = await createSessionStore({
    state,
    path: path.join(dir, "agents", "main", "sessions", "sessions.json"),
    keys: {},
    logger,
  });
  const inbox = await createInbox({ state, path: path.join(dir, "state", "inbox.json"), logger });
  const outbox = await createOutbox({ state, path: path.join(dir, "state", "outbox.json") });
  return {
    sessions,
    inbox,
    outbox,
    /** Closes the stores, then the port (the gateway's order). */
    async close(): Promise<void> {
      await sessions.close();
      await inbox.close();
      await outbox.close();
      await state.close();
    },
  };
}

/** A direct message with platform id `messageId`; its dedupe key is {@link dedupeKeyOf}. */
export const inboundMessage = (messageId: string): InboundMessage =>
  InboundMessageSchema.parse({
    channel: "telegram",
    accountId: "default",
    chat: { type: "direct", id: "42" },
    sender: { id: "42" },
    messageId,
    text: `message ${messageId}`,
  });

/** The inbox dedupe key of {@link inboundMessage}. */
export const dedupeKeyOf = (messageId: string) => inboundDedupeKey(inboundMessage(messageId))!;

/** An outbox item of two chunks to one chat. */
export const outboundItem = (id: string) => ({
  id,
  sessionKey: "agent:main:telegram:dm:42",
  target: { channel: "telegram", to: "42" },
  kind: "reply" as const,
  chunks: ["first", "second"],
});

/** The session key crash writes patch for write number `n` (ten sessions, in turn). */
export const crashSessionKey = (n: number) => `agent:main:telegram:dm:${n % 10}`;

/** The session key of commit write number `n` (one session per write). */
export const commitSessionKey = (n: number) => `agent:main:telegram:dm:c${n}`;
