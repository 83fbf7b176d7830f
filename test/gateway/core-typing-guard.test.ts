// The gateway core asks its cluster's send guard before every typing indicator, as before every
// message (docs/scale-out.md): an owner whose guard refuses shows no "typing" in the chat either.
import { describe, expect, it, onTestFinished } from "vitest";
import { CHANNELS } from "../../adapters/index.js";
import { parseConfig } from "../../src/config/index.js";
import type { GatewayCluster } from "../../src/gateway/core-cluster.js";
import { InboundMessageSchema } from "../../src/routing/index.js";
import { createFakeChannelAdapter } from "../fakes/fake-channel-adapter.js";
import { createScriptedModel } from "../fakes/scripted-model.js";
import { createTestCore, homeForTest } from "../support/test-core.js";

/** A cluster membership whose send guard says `answer` and counts how often it was asked. */
function guardedCluster(answer: boolean) {
  const asked = { count: 0 };
  const cluster: GatewayCluster = {
    nodeId: "gw-test",
    guard: async (database) => database,
    owner: async () => undefined,
    joined: () => undefined,
    relaySecret: async () => "secret",
    holdAccount: async () => undefined,
    releaseAccounts: async () => undefined,
    mayStillSend: async () => {
      asked.count++;
      return answer;
    },
    holdsLane: async () => true,
    status: async () => ({ backend: "local" as const, note: "a test" }),
  };
  return { cluster, asked };
}

describe("typing indicators through the send guard", () => {
  for (const owner of [true, false])
    it(`${owner ? "shows" : "shows no"} typing indicator while a turn runs when the guard says ${owner}`, async () => {
      const home = await homeForTest("core-typing");
      const { config } = parseConfig({ channels: { telegram: { owners: ["42"] } } }, "config", CHANNELS);
      const typed: string[] = [];
      const adapter = Object.assign(createFakeChannelAdapter({ id: "telegram" }), {
        typing: async (target: { to?: string }) => void typed.push(target.to ?? ""),
      });
      const { cluster, asked } = guardedCluster(owner);
      const core = await createTestCore(config, home, {
        adapters: [adapter],
        // A model that takes its time, so the turn is still running when the indicator is due.
        resolveModel: (ref) => ({ model: createScriptedModel([{ text: "hi", delayMs: 50 }]), ref, offline: false }),
        cluster,
      });
      onTestFinished(() => core.stop(0));
      const message = { channel: "telegram", chat: { type: "direct", id: "42" }, sender: { id: "42" } };
      const result = await core.pipeline.handleInbound(
        InboundMessageSchema.parse({ ...message, messageId: "m1", text: "hello" }),
      );
      if (result.status === "queued") await result.done;
      expect(asked.count).toBeGreaterThan(0);
      expect(typed).toEqual(owner ? ["42"] : []);
    });
});
