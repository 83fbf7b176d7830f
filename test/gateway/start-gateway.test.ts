import { describe, expect, it } from "vitest";
import { useTestGateways } from "../support/test-gateway.js";

const start = useTestGateways();
const SHARED = "several people may DM the bot and share one session";

describe("startGateway", () => {
  it("warns once at start when several people may DM a bot whose DMs share the main session", async () => {
    const gw = await start({ config: { channels: { telegram: { allowFrom: ["42", "43"] } } } });
    const warnings = gw.logger.records.filter((r) => r.level === "warn" && r.message === SHARED);
    expect(warnings).toHaveLength(1);
    expect(String(warnings[0]!.fields.hint)).toContain(`dmScope: "per-channel-peer"`);
  });

  it("does not warn for a bot only its owner may DM, or with DMs per sender", async () => {
    const solo = await start({ config: { channels: { telegram: { allowFrom: ["42"] } } } });
    const perSender = await start({
      config: { session: { dmScope: "per-channel-peer" }, channels: { telegram: { dmPolicy: "open" } } },
    });
    for (const gw of [solo, perSender]) expect(gw.logger.records.some((r) => r.message === SHARED)).toBe(false);
  });

  it('logs how long each step of its start took with "gateway listening", in the order they ran', async () => {
    const gw = await start({ config: {} });
    const listening = gw.logger.records.find((r) => r.message === "gateway listening");
    const steps = listening?.fields.startupMs as Record<string, number>;
    expect(Object.keys(steps)).toEqual([
      "stateTables",
      "outbox",
      "inbox",
      "agentsCronInbound",
      "listen",
      "sessionsWorkspacesMcp",
      "inboxResume",
      "adapters",
      "pairing",
      "cron",
    ]);
    for (const ms of Object.values(steps)) expect(ms).toBeGreaterThanOrEqual(0);
  });
});
