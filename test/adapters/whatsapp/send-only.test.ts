// A send-only WhatsApp start (cluster.owners many, a partition core): no socket, no lease, no
// channel state; every piece and typing indicator goes to the account's holder by peer call.
import { mkdtemp } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createWhatsAppAdapter, defaultAuthDir } from "../../../adapters/whatsapp/index.js";
import { WhatsAppConfigSchema } from "../../../adapters/whatsapp/whatsapp-config.js";
import { type AdapterStartContext, DeliveryError, ErrorCodes, SwitchboardError } from "../../../src/index.js";
import { createMemoryLogger } from "../../../src/logger.js";
import { createFakeWhatsApp, linkDevice } from "../../fakes/fake-whatsapp.js";

/** A started send-only adapter whose peer calls `answer` answers, each call recorded. */
async function sendOnly(answer: (name: string, params: unknown) => Promise<unknown>, config: object = {}) {
  const home = await mkdtemp(path.join(os.tmpdir(), "sb-wa-"));
  await linkDevice(defaultAuthDir(home, "default"));
  const fake = createFakeWhatsApp();
  const adapter = createWhatsAppAdapter(WhatsAppConfigSchema.parse(config), {
    home,
    logger: createMemoryLogger(),
    socketFactory: fake.factory,
  });
  const calls: Array<{ name: string; params: unknown }> = [];
  const held: string[] = [];
  const untouchable = new Proxy({} as AdapterStartContext["state"], {
    get: () => {
      throw new Error("a send-only start touched the channel state");
    },
  });
  await adapter.start(async () => undefined, {
    state: untouchable,
    receive: false,
    holdAccount: async (accountId) => void held.push(accountId),
    callHolder: async (name, params) => {
      calls.push({ name, params: JSON.parse(JSON.stringify(params)) });
      return answer(name, params);
    },
  });
  return { adapter, fake, calls, held };
}

describe("a send-only WhatsApp start (cluster.owners many on a gateway that does not hold the account)", () => {
  it("sends each piece and its typing through the holder by peer call, opening no socket and taking no lease", async () => {
    let next = 1;
    const { adapter, fake, calls, held } = await sendOnly(async (name) =>
      name === "whatsapp.send" ? { messageIds: [`BOT${next++}`] } : null,
    );
    try {
      const target = { channel: "whatsapp", to: "+15550009999" };
      const part = { index: 0, count: 2 };
      const first = { text: "one", replyToMessageId: "IN7", part, idempotencyKey: "o1#0", kind: "reply" as const };
      expect(await adapter.send(target, first)).toEqual({ messageIds: ["BOT1"] });
      expect(await adapter.send(target, { text: "two", part: { index: 1, count: 2 } })).toEqual({
        messageIds: ["BOT2"],
      });
      await adapter.typing?.(target);
      expect(calls).toEqual([
        {
          name: "whatsapp.send",
          params: {
            accountId: "default",
            to: "+15550009999",
            message: { text: "one", replyToMessageId: "IN7", part, idempotencyKey: "o1#0" },
          },
        },
        {
          name: "whatsapp.send",
          params: { accountId: "default", to: "+15550009999", message: { text: "two", part: { index: 1, count: 2 } } },
        },
        { name: "whatsapp.typing", params: { accountId: "default", to: "+15550009999" } },
      ]);
      expect(held).toEqual([]);
      expect(fake.sockets).toHaveLength(0);
      expect(adapter.accountHealth?.("default")).toEqual({ connected: true, sendOnly: true });
    } finally {
      await adapter.stop();
    }
  });

  it("leaves a piece pending (retryable) when the holder cannot send it, and records the holder's final refusal as the holder would", async () => {
    const answers: Array<() => Promise<unknown>> = [
      async () => {
        throw new SwitchboardError("UNAVAILABLE", 'WhatsApp account "default" is not connected');
      },
      async () => ({
        refused: { message: "+15550001234 is not on WhatsApp", retryable: false, reason: "chat_not_found" },
      }),
    ];
    const { adapter } = await sendOnly(() => answers.shift()!());
    try {
      const target = { channel: "whatsapp", to: "+15550001234" };
      const unreachable = await adapter.send(target, { text: "hi" }).catch((err: unknown) => err);
      expect(unreachable).toBeInstanceOf(DeliveryError);
      expect(unreachable).toMatchObject({ retryable: true, reason: "not_connected" });
      expect((unreachable as Error).message).toContain("not connected");
      const refused = await adapter.send(target, { text: "hi" }).catch((err: unknown) => err);
      expect(refused).toBeInstanceOf(DeliveryError);
      expect(refused).toMatchObject({
        retryable: false,
        reason: "chat_not_found",
        message: "+15550001234 is not on WhatsApp",
      });
    } finally {
      await adapter.stop();
    }
  });

  it("is refused with a clear config error without the peer call, before any lease is taken or socket opened", async () => {
    const home = await mkdtemp(path.join(os.tmpdir(), "sb-wa-"));
    await linkDevice(defaultAuthDir(home, "default"));
    const fake = createFakeWhatsApp();
    const adapter = createWhatsAppAdapter(WhatsAppConfigSchema.parse({}), {
      home,
      logger: createMemoryLogger(),
      socketFactory: fake.factory,
    });
    const held: string[] = [];
    const context = {
      state: {} as AdapterStartContext["state"],
      receive: false,
      holdAccount: async (id: string) => void held.push(id),
    };
    try {
      await expect(adapter.start(async () => undefined, context)).rejects.toMatchObject({
        code: ErrorCodes.CONFIG_INVALID,
        message: expect.stringContaining(
          "a send-only start needs the peer call to that gateway (cluster.owners: many)",
        ),
      });
      expect(held).toEqual([]);
      expect(fake.sockets).toHaveLength(0);
    } finally {
      await adapter.stop();
    }
  });
});
