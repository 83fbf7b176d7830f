import { mkdtemp } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createWhatsAppAdapter, defaultAuthDir } from "../../../adapters/whatsapp/index.js";
import { WhatsAppConfigSchema } from "../../../adapters/whatsapp/whatsapp-config.js";
import { ErrorCodes } from "../../../src/index.js";
import { createMemoryLogger } from "../../../src/logger.js";
import { createFakeWhatsApp, linkDevice } from "../../fakes/fake-whatsapp.js";
import { testStartContext } from "../../support/channel-context.js";

describe("a send-only WhatsApp start (cluster.owners many on a gateway that does not hold the account)", () => {
  it("is refused with a clear config error, before any lease is taken or socket opened", async () => {
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
      ...(await testStartContext("whatsapp", home)),
      receive: false,
      holdAccount: async (accountId: string) => void held.push(accountId),
    };
    try {
      await expect(adapter.start(async () => undefined, context)).rejects.toMatchObject({
        code: ErrorCodes.CONFIG_INVALID,
        message: expect.stringContaining(
          "A WhatsApp account sends only from the gateway that holds it; cluster.owners: many does not support WhatsApp accounts yet",
        ),
      });
      expect(held).toEqual([]);
      expect(fake.sockets).toHaveLength(0);
    } finally {
      await adapter.stop();
    }
  });
});
