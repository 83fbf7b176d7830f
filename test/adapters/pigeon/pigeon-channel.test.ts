// The proof that a channel is a table entry and nothing else: a fourth channel (Pigeon, on an
// in-memory platform) joins through the table alone. It passes the adapter contract, its config is
// checked strictly with did-you-mean by `switchboard config validate`, and through a real gateway a
// room's rules are read under the name the channel gave them ("rooms"). No file of src/ names it.
import { readFileSync } from "node:fs";
import path from "node:path";
import { Readable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { CHANNELS, createConfiguredAdapters } from "../../../adapters/index.js";
import { createOfflineModel } from "../../../src/agents/models/index.js";
import { type CliIo, runCli } from "../../../src/cli/main.js";
import { parseConfig } from "../../../src/config/index.js";
import { startGateway } from "../../../src/gateway/start-gateway.js";
import { createMemoryLogger } from "../../../src/logger.js";
import { runAdapterContract } from "../../contracts/adapter-contract.js";
import { tempHome } from "../../support/fake-cli-io.js";
import { sourceFiles } from "../../support/import-graph.js";
import { createPigeonAdapter, createPigeonChannel, pigeonToInbound } from "./pigeon-channel.js";
import { type PigeonEvent, createPigeonPlatform } from "./pigeon-platform.js";
import { testStartContext } from "../../support/channel-context.js";

const BOTS = { "pigeon-token": "bot" };
const logger = createMemoryLogger();
const section = { token: "pigeon-token", allowFrom: ["ada"] };

/** A Pigeon adapter on a fresh platform, with the contract's view of that platform. */
function pigeonOnPlatform() {
  const platform = createPigeonPlatform(BOTS);
  const adapter = createPigeonAdapter(section, platform, BOTS, logger);
  const sent = () => platform.posts.map((p) => ({ to: p.chat, text: p.text }));
  return { platform, adapter, sent };
}

runAdapterContract<PigeonEvent>({
  channel: "pigeon",
  fixturesDir: path.resolve(import.meta.dirname, "fixtures"),
  toInbound: (event) => pigeonToInbound(event, "default", "bot"),
  threads: false,
  platformMaxTextLength: 1000,
  targets: {
    samples: [
      { channel: "pigeon", to: "user:ada" },
      { channel: "pigeon", to: "room:lab" },
    ],
    bad: ["", "ada", "user:", "channel:7", "room:a b"],
  },
  inbound: {
    dm: {
      chat: { type: "direct", id: "user:ada" },
      sender: { id: "ada", name: "Ada" },
      text: "hello",
      wasMentioned: false,
    },
    "room-mention": { chat: { type: "group", id: "room:lab" }, sender: { id: "grace" }, wasMentioned: true },
    "own-echo": null,
    empty: null,
  },
  async platform() {
    const { platform, adapter, sent } = pigeonOnPlatform();
    await adapter.start(async () => undefined, await testStartContext("pigeon"));
    return {
      adapter,
      target: { channel: "pigeon", to: "user:ada" },
      sent,
      failNextSend: (failure) => platform.failNextPost(failure),
      close: () => adapter.stop(),
    };
  },
  async live() {
    const { platform, adapter, sent } = pigeonOnPlatform();
    return {
      adapter,
      userWrites: (text) => platform.emit({ chat: "user:ada", from: { id: "ada", name: "Ada" }, text }),
      botWrites: (text) => platform.emit({ chat: "user:ada", from: { id: "bot", bot: true }, text }),
      sent,
      openConnections: () => platform.connections(),
      close: async () => undefined,
    };
  },
});

const root = path.resolve(import.meta.dirname, "../../..");

describe("a fourth channel through the table alone", () => {
  const platform = createPigeonPlatform(BOTS);
  const table = [...CHANNELS, createPigeonChannel(platform, BOTS)];
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it("is named by no file of src/", () => {
    const named = sourceFiles(root, "src").filter((file) =>
      /\bpigeon\b/i.test(readFileSync(path.join(root, file), "utf8")),
    );
    expect(named).toEqual([]);
  });

  it("has its config checked strictly, with did-you-mean, by `switchboard config validate`", async () => {
    const home = await tempHome();
    const { writeFile } = await import("node:fs/promises");
    const file = path.join(home, "switchboard.json5");
    const run = async (config: unknown) => {
      await writeFile(file, JSON.stringify(config));
      let stderr = "";
      const io: CliIo = {
        env: { SWITCHBOARD_HOME: home },
        stdin: Object.assign(Readable.from([]), { isTTY: true }),
        stdout: { write: () => true },
        stderr: { write: (s: string) => (stderr += s) },
        cwd: home,
        homeDir: home,
        channels: async () => table,
      };
      const code = await runCli(["config", "validate", "--config", file], io);
      return { code, stderr };
    };
    expect(
      (await run({ channels: { pigeon: { token: "t", rooms: { "room:lab": { requireMention: false } } } } })).code,
    ).toBe(0);
    const typo = await run({ channels: { pigeon: { tokn: "t" }, pigon: {} } });
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain("channels.pigeon.tokn: unknown key (did you mean token?)");
    expect(typo.stderr).toContain("channels.pigon: unknown key (did you mean pigeon?)");
    const wrong = await run({ channels: { pigeon: { textChunkLimit: 5000 } } });
    expect(wrong.stderr).toContain("channels.pigeon.textChunkLimit: must be at most 1000");
  });

  it("runs in a gateway: a room's rules are read under the channel's own name for groups", async () => {
    const home = await tempHome();
    const raw = {
      channels: {
        pigeon: { token: "pigeon-token", groupAllowFrom: ["grace"], rooms: { "room:lab": { requireMention: false } } },
      },
    };
    const { config } = parseConfig(raw, "config", table);
    const adapters = await createConfiguredAdapters(config, { home, env: {}, logger }, table);
    expect(adapters.map((a) => a.id)).toEqual(["pigeon"]);
    const gateway = await startGateway({
      config,
      home,
      homeDir: home,
      logger,
      port: 0,
      resolveModel: (ref) => ({ model: createOfflineModel(), ref, offline: true }),
      adapters,
    });
    cleanups.push(() => gateway.close());
    // No mention: only the room's `requireMention: false` (under "rooms") lets this through.
    await platform.emit({ chat: "room:lab", from: { id: "grace" }, text: "ping" });
    await expect
      .poll(() => platform.posts.map((p) => [p.chat, p.text]), { timeout: 10_000 })
      .toEqual([["room:lab", "Echo: ping"]]);
  });
});
