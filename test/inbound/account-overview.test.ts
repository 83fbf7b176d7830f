import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/index.js";
import { accountOverviews, configuredAccounts, sharedDmWarning } from "../../src/inbound/account-overview.js";

const config = (raw: Record<string, unknown>) => parseConfig(raw).config;

describe("sharedDmWarning", () => {
  it.each([
    ["an allowFrom with two ids", { telegram: { allowFrom: ["42", "43"] } }, "42, 43 may all DM it"],
    ["an allowFrom with '*'", { telegram: { allowFrom: ["*"] } }, `allowFrom has "*"`],
    ["an open dmPolicy", { telegram: { dmPolicy: "open" } }, `dmPolicy is "open"`],
    ["an owner and another allowFrom id", { telegram: { owners: ["42"], allowFrom: ["43"] } }, "42, 43 may all DM it"],
    // A command user's /status or /context in a DM reads the shared main session.
    [
      "a command user besides the one talker",
      { telegram: { allowFrom: ["42"], commandAllowFrom: ["7"] } },
      "42, 7 may all DM it",
    ],
  ])("warns under the default dmScope main for %s, naming the channel and the fix", (_, channels, why) => {
    const warning = sharedDmWarning(config({ channels }));
    expect(warning).toContain(`telegram (${why})`);
    expect(warning).toContain("share one conversation");
    expect(warning).toContain(`dmScope: "per-channel-peer"`);
  });

  it.each([
    ["one person in allowFrom", { telegram: { allowFrom: ["42"] } }],
    ["the same person as owner and in allowFrom", { telegram: { owners: ["42"], allowFrom: ["tg:42"] } }],
    [
      "DMs switched off for all but one owner",
      { telegram: { dmPolicy: "disabled", allowFrom: ["*"], owners: ["42"] } },
    ],
    ["no channel at all", {}],
  ])("stays quiet for %s", (_, channels) => {
    expect(sharedDmWarning(config({ channels }))).toBeUndefined();
  });

  it("stays quiet when DMs are per sender", () => {
    expect(
      sharedDmWarning(
        config({ channels: { telegram: { dmPolicy: "open" } }, session: { dmScope: "per-channel-peer" } }),
      ),
    ).toBeUndefined();
  });

  it("names every risky account in one paragraph", () => {
    const warning = sharedDmWarning(
      config({
        channels: {
          telegram: { allowFrom: ["42"], accounts: { work: { dmPolicy: "open" } } },
          discord: { allowFrom: ["*"] },
        },
      }),
    );
    expect(warning).toContain("telegram (account work)");
    expect(warning).toContain("discord");
    expect(warning).not.toContain("telegram (42");
    expect(warning).not.toContain("\n");
  });
});

describe("accountOverviews", () => {
  it("shows the owners taken from allowFrom when no owners list is set, and where they came from", () => {
    expect(
      accountOverviews(config({ channels: { telegram: { allowFrom: ["42", "*"], commandAllowFrom: ["7", "42"] } } })),
    ).toEqual([
      {
        channel: "telegram",
        accountId: "default",
        dmPolicy: "allowlist",
        owners: ["42"],
        ownersFrom: "allowFrom",
        commandUsers: ["7"],
        dmSenders: ["*"],
        manyDmSenders: true,
      },
    ]);
  });

  it("shows an explicit empty owners list as nobody", () => {
    expect(accountOverviews(config({ channels: { telegram: { allowFrom: ["42"], owners: [] } } }))[0]).toMatchObject({
      owners: [],
      ownersFrom: "owners",
    });
  });

  it("lists the top-level account and each enabled named account", () => {
    const accounts = configuredAccounts(
      config({
        channels: { telegram: { accounts: { work: {}, off: { enabled: false } } }, discord: { enabled: false } },
      }),
    );
    expect(accounts).toEqual([
      { channel: "telegram", accountId: "default" },
      { channel: "telegram", accountId: "work" },
    ]);
  });

  it("leaves out a default account switched off under accounts.default, as the adapters do", () => {
    const accounts = configuredAccounts(
      config({ channels: { whatsapp: { accounts: { default: { enabled: false }, Home: {} } } } }),
    );
    expect(accounts).toEqual([{ channel: "whatsapp", accountId: "home" }]);
  });
});
