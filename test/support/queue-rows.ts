// What doctor and `inbox list` read, written as a gateway writes it: one retrying and one failed
// outbox item, and one inbound message set aside. Shared by the local and the PostgreSQL CLI tests.
import type { Outbox } from "../../src/delivery/outbox.js";
import type { Inbox } from "../../src/inbound/inbox.js";
import { telegramDm } from "./telegram-dm.js";

/** r1 to telegram:42 retrying after "network: Telegram unreachable"; r2 to telegram:43 failed with chat_not_found. */
export async function seedOutbox(outbox: Outbox, now = Date.now()): Promise<void> {
  const item = (id: string, to: string) => ({
    id,
    sessionKey: `agent:main:telegram:dm:${to}`,
    target: { channel: "telegram", to },
    kind: "reply" as const,
    chunks: ["hi"],
  });
  await outbox.enqueue(item("r1", "42"));
  await outbox.update("r1", {
    attempts: 9,
    nextAttemptAt: now + 30_000,
    lastError: { reason: "network", message: "Telegram unreachable" },
  });
  await outbox.enqueue(item("r2", "43"));
  await outbox.update("r2", {
    status: "failed",
    attempts: 1,
    lastError: { reason: "chat_not_found", message: "Telegram chat 43 not found" },
  });
}

/** "the poison" from telegram:42 (id telegram:default:42:9), set aside after 3 starts. */
export async function seedSetAside(inbox: Inbox): Promise<void> {
  const message = telegramDm("the poison", { messageId: "9" });
  await inbox.claim("telegram:default:42:9", message);
  await inbox.setAside("telegram:default:42:9", { reason: "its turn did not finish in 3 starts" });
}
