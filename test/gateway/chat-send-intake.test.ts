// The owner's intake of a handed-off chat.send (src/gateway/chat-send-intake.ts): it returns once the
// message is stored; its handling goes on, and a handling that fails is not an unhandled rejection.
import { afterEach, expect, it } from "vitest";
import type { HandoffRow } from "../../src/cluster/handoff-sql.js";
import { chatSendHandoffIntake } from "../../src/gateway/chat-send-intake.js";

const unhandled: unknown[] = [];
const record = (reason: unknown) => unhandled.push(reason);
afterEach(() => {
  process.off("unhandledRejection", record);
});

const row: HandoffRow = {
  id: "1",
  kind: "chat-send",
  account: "default",
  dedupeKey: "webchat:default:agent:main:webchat:dm:ada:k1",
  runId: "k1",
  payload: {
    message: {
      channel: "webchat",
      chat: { type: "direct", id: "ada" },
      sender: { id: "ada" },
      text: "hi",
      messageId: "k1",
    },
    sessionKey: "agent:main:webchat:dm:ada",
  },
  receivedBy: "gw-standby",
  ageMs: 0,
};

it("takes a stored chat.send in whose handling then fails without an unhandled rejection", async () => {
  process.on("unhandledRejection", record);
  let failHandling: (err: Error) => void = () => undefined;
  const result = new Promise<never>((_, reject) => {
    failHandling = reject;
  });
  const accepted: unknown[] = [];
  const intake = chatSendHandoffIntake(async (message) => {
    accepted.push(message);
    return { result };
  });
  await intake(row);
  expect(accepted).toHaveLength(1);
  failHandling(new Error("handleStored failed"));
  // Node reports an unhandled rejection once the microtasks after the rejection ran: a macrotask later.
  await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setImmediate(resolve));
  expect(unhandled).toEqual([]);
});
