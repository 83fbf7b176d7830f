import { describe, expect, it } from "vitest";
import { resolveQueueSettings } from "../../../src/agents/queue/queue-settings.js";
import { CHANNELS } from "../../../adapters/index.js";
import { parseConfig } from "../../../src/config/index.js";
import type { SwitchboardError } from "../../../src/errors.js";

const config = (raw: Record<string, unknown>) => parseConfig(raw, "config", CHANNELS).config;

describe("resolveQueueSettings", () => {
  const queue = {
    mode: "collect",
    cap: 5,
    channels: { telegram: { mode: "steer", debounceMs: 100 } },
    agents: { ops: { mode: "interrupt", overflow: "refuse" } },
  };

  it.each([
    [
      "the defaults",
      {},
      { agentId: "main" },
      { mode: "followup", debounceMs: 500, cap: 20, overflow: "summarize", source: "default" },
    ],
    [
      "session.queue",
      { session: { queue } },
      { agentId: "main", channel: "discord" },
      { mode: "collect", cap: 5, source: "default" },
    ],
    [
      "the channel over the defaults",
      { session: { queue } },
      { agentId: "main", channel: "telegram" },
      { mode: "steer", debounceMs: 100, source: "channel" },
    ],
    [
      "the agent over the channel, field by field",
      { session: { queue } },
      { agentId: "ops", channel: "telegram" },
      { mode: "interrupt", debounceMs: 100, overflow: "refuse", source: "agent" },
    ],
    [
      "the session's /queue over everything",
      { session: { queue } },
      { agentId: "ops", channel: "telegram", entry: { queueMode: "followup" as const } },
      { mode: "followup", source: "session" },
    ],
    [
      "the deprecated channels.whatsapp.debounceMs as collect",
      { channels: { whatsapp: { debounceMs: 800 } } },
      { agentId: "main", channel: "whatsapp", accountId: "default" },
      { mode: "collect", debounceMs: 800, source: "channel" },
    ],
    [
      "session.queue.channels.whatsapp over the deprecated key",
      {
        channels: { whatsapp: { debounceMs: 800 } },
        session: { queue: { channels: { whatsapp: { mode: "followup" } } } },
      },
      { agentId: "main", channel: "whatsapp", accountId: "default" },
      { mode: "followup", debounceMs: 800 },
    ],
  ])("reads %s", (_name, raw, scope, expected) => {
    expect(resolveQueueSettings(config(raw), scope)).toMatchObject(expected);
  });

  it("refuses an unknown mode with its path and the modes there are", () => {
    let details: readonly string[] = [];
    try {
      config({ session: { queue: { mode: "sometimes" } } });
    } catch (err) {
      details = (err as SwitchboardError).details;
    }
    expect(details).toHaveLength(1);
    expect(details[0]).toMatch(/^session\.queue\.mode: .*followup.*collect.*steer.*interrupt/);
  });
});
