import { describe, expect, it } from "vitest";
import { parseConfig } from "../adapters/table-config.js";
import type { SwitchboardError } from "../../src/errors.js";
import { resolveSharedSettings as resolveChannelSettings } from "../../src/delivery/account-settings.js";

function problems(raw: Record<string, unknown>): readonly string[] {
  try {
    parseConfig(raw);
  } catch (error) {
    return (error as SwitchboardError).details;
  }
  return [];
}

describe("channels.<channel>: dmPolicy pairing and pairing", () => {
  it("keeps allowlist as the default dmPolicy, with codes of an hour and three waiting", () => {
    const { config } = parseConfig({ channels: { telegram: {} } });
    const settings = resolveChannelSettings(config, "telegram", "default");
    expect(settings.dmPolicy).toBe("allowlist");
    expect(settings.pairing).toEqual({ codeTtlSeconds: 3600, maxPending: 3 });
  });

  it("takes pairing per account, each field defaulting on its own", () => {
    const { config } = parseConfig({
      channels: {
        whatsapp: { dmPolicy: "pairing", accounts: { work: { pairing: { maxPending: 10 } } } },
        discord: { dmPolicy: "pairing", pairing: { codeTtlSeconds: 600 } },
      },
    });
    expect(resolveChannelSettings(config, "whatsapp", "work")).toMatchObject({
      dmPolicy: "pairing",
      pairing: { codeTtlSeconds: 3600, maxPending: 10 },
    });
    expect(resolveChannelSettings(config, "discord", "default").pairing).toEqual({
      codeTtlSeconds: 600,
      maxPending: 3,
    });
  });

  it.each([
    [
      { telegram: { pairing: { codeTtlSeconds: 0 } } },
      /^channels\.telegram\.pairing\.codeTtlSeconds: must be at least 1$/,
    ],
    [{ telegram: { pairing: { maxPending: 0 } } }, /^channels\.telegram\.pairing\.maxPending: must be at least 1$/],
    [{ telegram: { pairing: { codeTTL: 60 } } }, /^channels\.telegram\.pairing/],
    [{ telegram: { groupPolicy: "pairing" } }, /^channels\.telegram\.groupPolicy: /],
  ])("refuses %j, naming the path", (channels, expected) => {
    expect(problems({ channels })).toEqual([expect.stringMatching(expected)]);
  });
});
