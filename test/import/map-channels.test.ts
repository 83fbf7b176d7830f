// How Clawdbot's DM policies come over: "pairing" stays pairing (Switchboard pairs too), and what
// the imported config then lets a stranger and a previously approved person do.
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/index.js";
import { mapChannels } from "../../src/import/map-channels.js";
import { emptyReport } from "../../src/import/import-report.js";
import { resolveAccess } from "../../src/inbound/access.js";
import type { InboundMessage } from "../../src/routing/inbound-message.js";

const dmFrom = (channel: string, id: string, accountId = "default") =>
  ({
    channel,
    accountId,
    chat: { type: "direct", id },
    sender: { id },
    text: "hi",
    wasMentioned: false,
  }) as InboundMessage;

describe("importing Clawdbot's dmPolicy", () => {
  it("keeps pairing, written or by Clawdbot's default, on accounts too, and lets the people approved so far talk", () => {
    const report = emptyReport();
    const channels = mapChannels(
      {
        channels: {
          telegram: { botToken: "123:ABC", dmPolicy: "pairing", allowFrom: ["111"], owners: ["111"] },
          discord: { token: "x", dm: { policy: "allowlist", allowFrom: ["222"] } },
          whatsapp: { accounts: { work: { dmPolicy: "pairing" } } },
        },
      },
      { telegram: ["333"] },
      report,
    );
    const { config } = parseConfig({ channels });
    expect(config.channels.telegram?.dmPolicy).toBe("pairing");
    expect(config.channels.discord?.dmPolicy).toBe("allowlist");
    // Unset at the top: Clawdbot's default (pairing) is written, since Switchboard's is allowlist.
    expect(config.channels.whatsapp?.dmPolicy).toBe("pairing");
    expect(config.channels.whatsapp?.accounts?.work?.dmPolicy).toBe("pairing");
    expect(report.notes).toContainEqual({
      where: "channels.whatsapp.dmPolicy",
      reason: `unset (Clawdbot's default is "pairing", Switchboard's "allowlist"): written as "pairing"`,
    });
    expect(report.notes.filter((n) => n.where === "channels.telegram.dmPolicy")).toEqual([]);

    // What the imported config does: a stranger may earn a code, an approved person and a listed one talk.
    expect(resolveAccess(config, dmFrom("telegram", "999"))).toMatchObject({ allowed: false, pairing: true });
    expect(resolveAccess(config, dmFrom("telegram", "333")).allowed).toBe(true);
    expect(resolveAccess(config, dmFrom("telegram", "111")).allowed).toBe(true);
    expect(resolveAccess(config, dmFrom("whatsapp", "+15550009", "work"))).toMatchObject({ pairing: true });
    expect(resolveAccess(config, dmFrom("discord", "999")).pairing).toBeUndefined();
  });
});
