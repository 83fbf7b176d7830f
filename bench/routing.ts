import { parseConfig } from "../src/config/index.js";
import { canonicalizeSessionKey, parseSessionKey, resolveAgentRoute } from "../src/routing/index.js";
import { type BenchTable, measureCases } from "./harness.js";

/** Routing runs for every inbound message: resolve the agent and key, parse and canonicalize keys. */
export function benchRouting(): BenchTable {
  const bindings = Array.from({ length: 50 }, (_, i) => ({
    agentId: `a${i}`,
    match: { channel: "discord", peer: { kind: "channel", id: `c${i}` } },
  }));
  const many = parseConfig({ agents: { list: bindings.map((b) => ({ id: b.agentId })) }, bindings }).config;
  const plain = parseConfig({}).config;
  const perPeer = parseConfig({ session: { dmScope: "per-channel-peer" } }).config;
  const linked = parseConfig({
    session: { dmScope: "per-peer", identityLinks: { alice: ["telegram:111", "discord:222"] } },
  }).config;
  return measureCases(
    "routing (per inbound message)",
    [
      {
        name: "resolveAgentRoute, no bindings, DM (default dmScope main)",
        run: () => resolveAgentRoute(plain, { channel: "telegram", peer: { kind: "dm", id: "111" } }),
      },
      {
        name: "resolveAgentRoute, no bindings, DM per-channel-peer",
        run: () => resolveAgentRoute(perPeer, { channel: "telegram", peer: { kind: "dm", id: "42" } }),
      },
      {
        name: "resolveAgentRoute, no bindings, Telegram group",
        run: () => resolveAgentRoute(plain, { channel: "telegram", peer: { kind: "group", id: "-1001234567890" } }),
      },
      {
        name: "resolveAgentRoute, no bindings, Telegram topic",
        run: () =>
          resolveAgentRoute(plain, {
            channel: "telegram",
            peer: { kind: "group", id: "-1001234567890" },
            topicId: "99",
          }),
      },
      {
        name: "resolveAgentRoute, DM with identity links (per-peer)",
        run: () => resolveAgentRoute(linked, { channel: "telegram", peer: { kind: "dm", id: "111" } }),
      },
      {
        name: "resolveAgentRoute, 50 bindings, last one matches",
        run: () => resolveAgentRoute(many, { channel: "discord", peer: { kind: "channel", id: "c49" } }),
      },
      {
        name: "resolveAgentRoute, 50 bindings, none matches",
        run: () => resolveAgentRoute(many, { channel: "discord", peer: { kind: "channel", id: "c99" } }),
      },
      {
        name: "parseSessionKey, topic key",
        run: () => parseSessionKey("agent:main:telegram:group:-1001234567890:topic:99"),
      },
      {
        name: "canonicalizeSessionKey, legacy group key",
        run: () => canonicalizeSessionKey("group:120363406150318674@g.us"),
      },
    ],
    { perBatch: 20_000, batches: 15 },
  );
}
