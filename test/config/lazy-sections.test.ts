// The CLI's config load builds only the schemas of the sections a file has; the others take the
// defaults the build recorded (src/config/schema/sections.ts). It must accept, refuse and explain
// every config exactly as the whole schema does.
import { describe, expect, it } from "vitest";
import { CHANNELS } from "../../adapters/index.js";
import { ConfigSchema } from "../../src/config/index.js";
import { sectionSchemasFor } from "../../src/config/schema/sections.js";
import { configSchemaOf } from "../../src/config/schema/top-level.js";
import { validateConfig } from "../../src/config/validate-config.js";
import { parseConfig } from "../adapters/table-config.js";

// What bin/cli-build.mjs writes into the build.
const BUILT_DEFAULTS = ConfigSchema.parse({});

/** The outcome of a parse: the config, or the error's message and every problem line. */
async function outcome(parse: () => unknown | Promise<unknown>) {
  try {
    return { config: await parse() };
  } catch (error) {
    return { error: (error as Error).message, details: (error as { details?: string[] }).details };
  }
}

async function lazyParse(raw: Record<string, unknown>, asked: string[]) {
  const table = async () => {
    asked.push("channel table");
    return CHANNELS;
  };
  const schema = configSchemaOf(await sectionSchemasFor(raw, table, BUILT_DEFAULTS));
  return validateConfig(schema, raw, "switchboard.json5");
}

const CONFIGS: Record<string, Record<string, unknown>> = {
  "no file (every default)": {},
  "one section": { gateway: { port: 9000 } },
  "an unknown section, with a did-you-mean": { sesion: { dmScope: "main" } },
  "a bad value in a present section": { session: { dmScope: "per-peer-channel" } },
  "a check across a present and an absent section": { hooks: { enabled: true } },
  "bindings naming an agent not in agents.list": {
    agents: { list: [{ id: "home" }] },
    bindings: [{ agentId: "work", match: { provider: "telegram" } }],
  },
  "a model alias": { models: { aliases: { mini: "openai/gpt-4o-mini" } }, agents: { defaults: { model: "mini" } } },
  "a channel section, by the channel table": {
    channels: { telegram: { dmPolicy: "open", allowFrom: [42], groups: { "-100": { requireMen: true } } } },
  },
  "every section but channels": {
    $schema: "./schema.json",
    session: { mainKey: "Home" },
    agents: { list: [{ id: "main", default: true }] },
    tools: { deny: ["exec"] },
    bindings: [],
    commands: { native: false },
    gateway: { auth: { token: "0123456789abcdef" } },
    models: { maxSteps: 4 },
    logging: { level: "debug" },
    mcp: { reconnectDelayMs: 100 },
    cron: { enabled: false },
    hooks: { enabled: true, token: "fedcba9876543210" },
  },
};

describe("loading the config section by section", () => {
  for (const [name, raw] of Object.entries(CONFIGS)) {
    it(`gives what the whole schema gives: ${name}`, async () => {
      const whole = await outcome(() => parseConfig(raw, "switchboard.json5"));
      const lazy = await outcome(() => lazyParse(raw, []));
      expect(lazy).toEqual(whole);
      // the same order of keys too (config print shows them in this order)
      expect(JSON.stringify(lazy)).toBe(JSON.stringify(whole));
    });
  }

  it("asks for the channel table only when the file has a channels section", async () => {
    const asked: string[] = [];
    await lazyParse({ gateway: { port: 9000 } }, asked);
    expect(asked).toEqual([]);
    await lazyParse({ channels: {} }, asked);
    expect(asked).toEqual(["channel table"]);
  });

  it("hands out a fresh copy of a default each time: changing one config leaves the next alone", async () => {
    const first = await lazyParse({}, []);
    first.config.session.resetTriggers.push("/again");
    const second = await lazyParse({}, []);
    expect(second.config.session.resetTriggers).toEqual(["/new", "/reset"]);
  });
});
