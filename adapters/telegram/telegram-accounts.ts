import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import path from "node:path";
import {
  DEFAULT_ACCOUNT_ID,
  ErrorCodes,
  SwitchboardError,
  accountConfigPath,
  channelAccountIds,
  resolveAccountSettings,
  skipsBareDefault,
} from "../../src/index.js";
import { type TelegramConfig, type TelegramSettings, telegramConfig } from "./telegram-config.js";

/** Webhook mode of one account: Telegram posts updates to `url`; the gateway serves them at `path`. */
export interface TelegramWebhook {
  url: string;
  /** checked against X-Telegram-Bot-Api-Secret-Token */
  secret: string;
  path: string;
}

/** One bot to run: its token and its complete settings (the account's fields over the channel's top level). */
export interface TelegramAccount {
  accountId: string;
  token: string;
  settings: TelegramSettings;
  webhook?: TelegramWebhook;
}

/** Where {@link resolveTelegramAccounts} reads tokens from. */
export interface AccountSources {
  /** the process environment, passed in (TELEGRAM_BOT_TOKEN) */
  env: Readonly<Record<string, string | undefined>>;
  /** `$SWITCHBOARD_HOME`: a relative `tokenFile` is read from here */
  home: string;
  /** the user's home, for `~/` in `tokenFile` */
  homeDir?: string;
}

const DEFAULT_WEBHOOK_PATH = "/telegram-webhook";

async function readToken(file: string, where: string, sources: AccountSources): Promise<string> {
  const full =
    file.startsWith("~/") && sources.homeDir
      ? path.join(sources.homeDir, file.slice(2))
      : path.resolve(sources.home, file);
  const text = await readFile(full, "utf8").catch((err: NodeJS.ErrnoException) => {
    throw new SwitchboardError(
      ErrorCodes.CONFIG_INVALID,
      `${where}.tokenFile: cannot read ${full} (${err.code ?? err.message}). Put the bot token from @BotFather in that file.`,
    );
  });
  const token = text.trim();
  if (!token)
    throw new SwitchboardError(
      ErrorCodes.CONFIG_INVALID,
      `${where}.tokenFile: ${full} is empty. Put the bot token from @BotFather in it.`,
    );
  return token;
}

async function tokenOf(
  accountId: string,
  fields: TelegramSettings,
  sources: AccountSources,
): Promise<string | undefined> {
  if (fields.botToken) return fields.botToken;
  if (fields.tokenFile) return readToken(fields.tokenFile, accountConfigPath("telegram", accountId), sources);
  return accountId === DEFAULT_ACCOUNT_ID ? sources.env.TELEGRAM_BOT_TOKEN?.trim() || undefined : undefined;
}

function webhookOf(accountId: string, fields: TelegramSettings, token: string): TelegramWebhook | undefined {
  if (!fields.webhookUrl) return undefined;
  // Without a configured secret, one derived from the token: stable across restarts, unguessable.
  const secret =
    fields.webhookSecret ?? createHash("sha256").update(`switchboard-telegram-webhook:${token}`).digest("hex");
  const defaultPath = accountId === DEFAULT_ACCOUNT_ID ? DEFAULT_WEBHOOK_PATH : `${DEFAULT_WEBHOOK_PATH}/${accountId}`;
  return { url: fields.webhookUrl, secret, path: fields.webhookPath ?? defaultPath };
}

/**
 * The bots to run. The top level is the `default` account; `accounts.<id>` add bots that inherit
 * the top level's shared settings but not its token or webhook. Token order: `botToken`, then
 * `tokenFile`, then (default account only) TELEGRAM_BOT_TOKEN. The default account is skipped when
 * other accounts exist and it has no token; with no accounts at all a missing token is an error.
 */
export async function resolveTelegramAccounts(
  config: TelegramConfig,
  sources: AccountSources,
): Promise<TelegramAccount[]> {
  const resolved: TelegramAccount[] = [];
  for (const accountId of channelAccountIds(config)) {
    const settings = resolveAccountSettings(telegramConfig, config, accountId);
    if (!settings.enabled) continue;
    const token = await tokenOf(accountId, settings, sources);
    if (!token) {
      if (skipsBareDefault(config, accountId, false)) continue;
      throw new SwitchboardError(
        ErrorCodes.CONFIG_INVALID,
        `${accountConfigPath("telegram", accountId)} has no bot token: set botToken or tokenFile${accountId === DEFAULT_ACCOUNT_ID ? ", or TELEGRAM_BOT_TOKEN" : ""} (get one from @BotFather).`,
      );
    }
    const webhook = webhookOf(accountId, settings, token);
    resolved.push({ accountId, token, settings, ...(webhook && { webhook }) });
  }
  return resolved;
}
