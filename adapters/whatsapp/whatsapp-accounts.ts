import path from "node:path";
import { channelAccountIds, normalizeAccountId, resolveAccountSettings, skipsBareDefault } from "../../src/index.js";
import { type WhatsAppConfig, type WhatsAppSettings, whatsappConfig } from "./whatsapp-config.js";

/** One linked device to run. */
export interface WhatsAppAccount {
  accountId: string;
  /** where its credentials live (mode 0700) */
  authDir: string;
  /** the account's settings: its own fields over the channel's over the defaults */
  settings: WhatsAppSettings;
}

/** The default credentials folder of an account: `$SWITCHBOARD_HOME/channels/whatsapp/<accountId>`. */
export function defaultAuthDir(home: string, accountId: string): string {
  return path.join(home, "channels", "whatsapp", accountId);
}

/** One account (configured or not) with its settings and credentials folder; a relative `authDir` is read from `home`. */
export function whatsappAccount(config: WhatsAppConfig | undefined, home: string, accountId: string): WhatsAppAccount {
  const id = normalizeAccountId(accountId);
  const settings = resolveAccountSettings(whatsappConfig, config, id);
  return {
    accountId: id,
    authDir: settings.authDir ? path.resolve(home, settings.authDir) : defaultAuthDir(home, id),
    settings,
  };
}

/**
 * The accounts to run: the top level is the `default` account, `accounts.<id>` add devices that
 * inherit the top level's settings but not its `authDir` (each device has its own credentials).
 * When `accounts` lists others, the default account runs only if it is named there too or the top
 * level sets its own `authDir`. Accounts with `enabled: false` are left out.
 */
export function resolveWhatsAppAccounts(config: WhatsAppConfig, home: string): WhatsAppAccount[] {
  return channelAccountIds(config)
    .filter((id) => !skipsBareDefault(config, id, config.authDir !== undefined))
    .map((id) => whatsappAccount(config, home, id))
    .filter((account) => account.settings.enabled);
}
