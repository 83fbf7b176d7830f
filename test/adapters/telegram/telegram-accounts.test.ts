import { mkdtemp, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { resolveTelegramAccounts } from "../../../adapters/telegram/index.js";
import { TelegramConfigSchema } from "../../../adapters/telegram/telegram-config.js";

async function resolve(config: Record<string, unknown>, env: Record<string, string> = {}, home?: string) {
  return resolveTelegramAccounts(TelegramConfigSchema.parse(config), {
    env,
    home: home ?? (await mkdtemp(path.join(os.tmpdir(), "sb-tga-"))),
  });
}

describe("resolveTelegramAccounts", () => {
  it("reads the token from botToken, then tokenFile (relative to the home), then TELEGRAM_BOT_TOKEN", async () => {
    const home = await mkdtemp(path.join(os.tmpdir(), "sb-tga-"));
    await writeFile(path.join(home, "token.txt"), "  2:FROMFILE\n");
    expect(
      (await resolve({ botToken: "1:CONFIG", tokenFile: "token.txt" }, { TELEGRAM_BOT_TOKEN: "3:ENV" }, home))[0]!
        .token,
    ).toBe("1:CONFIG");
    expect((await resolve({ tokenFile: "token.txt" }, { TELEGRAM_BOT_TOKEN: "3:ENV" }, home))[0]!.token).toBe(
      "2:FROMFILE",
    );
    expect((await resolve({}, { TELEGRAM_BOT_TOKEN: "3:ENV" }))[0]).toMatchObject({
      accountId: "default",
      token: "3:ENV",
    });
  });

  it("explains a missing or unreadable token", async () => {
    await expect(resolve({ dmPolicy: "open" })).rejects.toThrow(
      "channels.telegram has no bot token: set botToken or tokenFile, or TELEGRAM_BOT_TOKEN",
    );
    await expect(resolve({ tokenFile: "nope.txt" })).rejects.toThrow(
      /channels\.telegram\.tokenFile: cannot read .*nope\.txt \(ENOENT\)/,
    );
    await expect(resolve({ botToken: "1:A", accounts: { work: { tokenFile: "missing" } } })).rejects.toThrow(
      /channels\.telegram\.accounts\.work\.tokenFile/,
    );
  });

  it("gives other accounts the shared settings but not the top level's token or webhook", async () => {
    const accounts = await resolve(
      {
        botToken: "1:A",
        replyToMode: "off",
        webhookUrl: "https://example.com/tg",
        accounts: { Work: { botToken: "2:B" } },
      },
      { TELEGRAM_BOT_TOKEN: "3:ENV" },
    );
    expect(accounts.map((a) => [a.accountId, a.token, a.settings.replyToMode, a.webhook?.path])).toEqual([
      ["default", "1:A", "off", "/telegram-webhook"],
      ["work", "2:B", "off", undefined],
    ]);
  });

  it("gives each account complete settings: its own, else the channel's, else Telegram's defaults", async () => {
    const accounts = await resolve({
      botToken: "1:A",
      timeoutSeconds: 12,
      accounts: { work: { botToken: "2:B", textChunkLimit: 900 } },
    });
    expect(
      accounts.map((a) => [a.accountId, a.settings.textChunkLimit, a.settings.timeoutSeconds, a.settings.replyToMode]),
    ).toEqual([
      ["default", 4000, 12, "first"],
      ["work", 900, 12, "first"],
    ]);
  });

  it("skips a tokenless default account when other accounts exist, and disabled accounts", async () => {
    const accounts = await resolve({
      accounts: { work: { botToken: "2:B" }, old: { botToken: "4:D", enabled: false } },
    });
    expect(accounts.map((a) => a.accountId)).toEqual(["work"]);
  });

  it("derives a stable webhook secret from the token unless one is configured", async () => {
    const [first] = await resolve({ botToken: "1:A", webhookUrl: "https://example.com/tg" });
    const [again] = await resolve({ botToken: "1:A", webhookUrl: "https://example.com/tg" });
    const [other] = await resolve({ botToken: "9:Z", webhookUrl: "https://example.com/tg" });
    expect(first!.webhook!.secret).toMatch(/^[0-9a-f]{64}$/);
    expect(again!.webhook!.secret).toBe(first!.webhook!.secret);
    expect(other!.webhook!.secret).not.toBe(first!.webhook!.secret);
    const [configured] = await resolve({
      botToken: "1:A",
      webhookUrl: "https://example.com/tg",
      webhookSecret: "s3cret",
      webhookPath: "/hook",
    });
    expect(configured!.webhook).toEqual({ url: "https://example.com/tg", secret: "s3cret", path: "/hook" });
  });
});
