// The routing settings a schema's gateways must share (src/routing/routing-settings.ts): every
// setting a session key depends on differs when it routes differently, and spellings that route
// alike compare equal, so a gateway is refused only for a difference that matters.
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/index.js";
import { resolveAgentRoute } from "../../src/routing/resolve-route.js";
import { routingDifferences, routingSettings } from "../../src/routing/routing-settings.js";

const configOf = (raw: object) => parseConfig(raw).config;
const settingsOf = (raw: object) => routingSettings(configOf(raw));

/** A DM from `id` on telegram, as each config routes it. */
const dmKey = (raw: object, id = "111") =>
  resolveAgentRoute(configOf(raw), { channel: "telegram", peer: { kind: "dm", id } }).sessionKey;

describe("routing settings", () => {
  it("differ, by name, in each setting that gives one DM another session key", () => {
    const base = {};
    const cases: Array<[object, string]> = [
      [{ session: { dmScope: "per-peer" } }, "session.dmScope"],
      [{ session: { scope: "global" } }, "session.scope"],
      [{ session: { mainKey: "home" } }, "session.mainKey"],
      [{ agents: { list: [{ id: "main" }, { id: "ops", default: true }] } }, "agents.default"],
      [{ bindings: [{ agentId: "ops", match: { channel: "telegram" } }] }, "bindings"],
    ];
    for (const [raw, name] of cases) {
      expect(dmKey(raw), name).not.toBe(dmKey(base));
      const expected = name === "agents.default" ? [name, "agents.list"] : [name];
      expect(routingDifferences(settingsOf(raw), settingsOf(base)), name).toEqual(expected);
    }
    const linked = { session: { dmScope: "per-peer", identityLinks: { ada: ["telegram:111"] } } };
    expect(dmKey(linked)).not.toBe(dmKey({ session: { dmScope: "per-peer" } }));
    expect(routingDifferences(settingsOf(linked), settingsOf({ session: { dmScope: "per-peer" } }))).toEqual([
      "session.identityLinks",
    ]);
  });

  it("differ in the agent ids a standby lists and resolves sessions over, even when every key routes alike", () => {
    const two = { agents: { list: [{ id: "main" }, { id: "ops" }] } };
    expect(dmKey(two)).toBe(dmKey({}));
    expect(routingDifferences(settingsOf(two), settingsOf({}))).toEqual(["agents.list"]);
    expect(settingsOf(two)["agents.list"]).toEqual(["main", "ops"]);
    const reordered = { agents: { list: [{ id: "ops" }, { id: "main", default: true }] } };
    expect(routingDifferences(settingsOf(reordered), settingsOf(two))).toEqual(["agents.list"]);
  });

  it("are equal for spellings that route alike, and for settings routing does not read", () => {
    const plain = settingsOf({ bindings: [{ agentId: "main", match: { channel: "discord" } }] });
    const spelled = settingsOf({
      session: { mainKey: " MAIN ", queue: { cap: 5 } },
      agents: { list: [{ id: "main", default: true }] },
      bindings: [{ agentId: " Main ", match: { channel: " Discord ", accountId: "default" } }],
    });
    expect(routingDifferences(spelled, plain)).toEqual([]);
  });

  it("survive the JSON they are stored as, and call anything unreadable different", () => {
    const settings = settingsOf({ session: { identityLinks: { ada: ["telegram:111", "discord:9"] } } });
    expect(routingDifferences(settings, JSON.parse(JSON.stringify(settings)))).toEqual([]);
    expect(routingDifferences(settings, null)).toHaveLength(7);
  });
});
