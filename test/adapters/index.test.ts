import { afterEach, describe, expect, it } from "vitest";
import { createConfiguredAdapters } from "../../adapters/index.js";
import { parseConfig } from "./table-config.js";
import { createMemoryLogger } from "../../src/logger.js";
import { type FakeTelegramServer, TEST_BOT, startFakeTelegramServer } from "../fakes/fake-telegram-server.js";
import { tempHome } from "../support/test-gateway.js";
import { testStartContext } from "../support/channel-context.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function adaptersFor(raw: Record<string, unknown>) {
  return await createConfiguredAdapters(parseConfig(raw).config, {
    home: await tempHome(),
    env: {},
    logger: createMemoryLogger(),
  });
}

async function startedWith(raw: (fake: FakeTelegramServer) => Record<string, unknown>) {
  const fake = await startFakeTelegramServer();
  cleanups.push(fake.close);
  const [adapter] = await adaptersFor(raw(fake));
  await adapter!.start(async () => undefined, await testStartContext(adapter!.id));
  cleanups.push(() => adapter!.stop());
  await fake.waitFor("getUpdates");
  return fake;
}

describe("createConfiguredAdapters", () => {
  it("creates no adapter for a channel that is absent or disabled", async () => {
    expect(await adaptersFor({})).toEqual([]);
    expect(await adaptersFor({ channels: { telegram: { botToken: "1:A", enabled: false } } })).toEqual([]);
  });

  it("creates the Telegram adapter with the smallest text limit of its accounts", async () => {
    const adapters = await adaptersFor({
      channels: {
        telegram: {
          botToken: "1:A",
          textChunkLimit: 3500,
          accounts: { work: { botToken: "2:B", textChunkLimit: 3000 } },
        },
      },
    });
    expect(adapters.map((a) => [a.id, a.capabilities.maxTextLength])).toEqual([["telegram", 3000]]);
  });

  it("registers the command table as the bot's menu, unless commands.native is off", async () => {
    const on = await startedWith((fake) => ({
      channels: { telegram: { botToken: TEST_BOT.token, apiRoot: fake.apiRoot } },
    }));
    const menu = on.callsTo("setMyCommands")[0]!.body.commands as Array<{ command: string; description: string }>;
    expect(menu.map((c) => c.command)).toEqual(expect.arrayContaining(["help", "status", "send", "stop", "new"]));
    expect(menu.every((c) => c.description.length >= 1 && c.description.length <= 256)).toBe(true);
    const off = await startedWith((fake) => ({
      commands: { native: false },
      channels: { telegram: { botToken: TEST_BOT.token, apiRoot: fake.apiRoot } },
    }));
    expect(off.callsTo("setMyCommands")).toEqual([]);
  });
});
