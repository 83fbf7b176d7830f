import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/index.js";

describe("cron and hooks config", () => {
  it("fills the defaults", () => {
    const { config } = parseConfig({});
    expect(config.cron).toEqual({ enabled: true, runLogMaxBytes: 2_000_000 });
    expect(config.hooks).toEqual({
      enabled: false,
      path: "/hooks",
      allowedAgentIds: [],
      allowRequestSessionKey: false,
      maxBodyBytes: 262_144,
    });
  });

  it.each([
    [{ hooks: { enabled: true } }, "hooks.token: required when hooks.enabled is true"],
    [{ hooks: { enabled: true, token: "short" } }, "hooks.token: must be at least 16 characters"],
    [
      { hooks: { token: "same-token-0123456789" }, gateway: { auth: { token: "same-token-0123456789" } } },
      "hooks.token: must differ from gateway.auth.token",
    ],
    [{ hooks: { path: "/hooks/" } }, "hooks.path: must start with"],
    [{ hooks: { enabeld: true } }, "hooks.enabeld"],
    [{ hooks: { path: "/tools" } }, `hooks.path: "/tools" overlaps the gateway's own /tools`],
    [{ hooks: { path: "/healthz" } }, "overlaps the gateway's own /healthz"],
  ])("refuses %j", (raw, message) => {
    expect(() => parseConfig(raw)).toThrow();
    try {
      parseConfig(raw);
    } catch (err) {
      expect([(err as Error).message, ...((err as { details?: string[] }).details ?? [])].join("\n")).toContain(
        message,
      );
    }
  });
});
