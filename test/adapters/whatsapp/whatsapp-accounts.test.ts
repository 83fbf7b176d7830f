import path from "node:path";
import { describe, expect, it } from "vitest";
import { resolveWhatsAppAccounts } from "../../../adapters/whatsapp/whatsapp-accounts.js";
import { WhatsAppConfigSchema } from "../../../adapters/whatsapp/whatsapp-config.js";

const HOME = "/srv/switchboard";
const accounts = (raw: Record<string, unknown>) =>
  resolveWhatsAppAccounts(WhatsAppConfigSchema.parse(raw), HOME).map((a) => ({
    id: a.accountId,
    authDir: a.authDir,
    replyToMode: a.settings.replyToMode,
    selfChatMode: a.settings.selfChatMode,
  }));

describe("resolveWhatsAppAccounts", () => {
  it("runs the default account from the top level, credentials under $SWITCHBOARD_HOME, defaults applied", () => {
    expect(accounts({})).toEqual([
      {
        id: "default",
        authDir: path.join(HOME, "channels/whatsapp/default"),
        replyToMode: "first",
        selfChatMode: false,
      },
    ]);
  });

  it("gives each named account its own credentials and the top level's other settings", () => {
    expect(accounts({ authDir: "wa/main", selfChatMode: true, accounts: { Work: { replyToMode: "off" } } })).toEqual([
      { id: "default", authDir: path.join(HOME, "wa/main"), replyToMode: "first", selfChatMode: true },
      { id: "work", authDir: path.join(HOME, "channels/whatsapp/work"), replyToMode: "off", selfChatMode: true },
    ]);
  });

  it("leaves out an unnamed default account when others are listed, and accounts switched off", () => {
    expect(accounts({ accounts: { work: {}, old: { enabled: false } } }).map((a) => a.id)).toEqual(["work"]);
  });
});
