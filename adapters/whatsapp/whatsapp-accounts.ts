import path from "node:path";
import { type Config, DEFAULT_ACCOUNT_ID, normalizeAccountId } from "../../src/index.js";

/** `channels.whatsapp` as validated by the core's config schema. */
export type WhatsAppConfig = NonNullable<Config["channels"]["whatsapp"]>;
/** The settings of one account: its own fields over the channel's top level. */
type WhatsAppSettings = Omit<WhatsAppConfig, "accounts">;

/** One linked device to run. */
export interface WhatsAppAccount {
  accountId: string;
  /** where its credentials live (mode 0700) */
  authDir: string;
  settings: WhatsAppSettings;
}

/** The default credentials folder of an account: `$SWITCHBOARD_HOME/channels/whatsapp/<accountId>`. */
export function defaultAuthDir(home: string, accountId: string): string {
  return path.join(home, "channels", "whatsapp", accountId);
}

/**
 * The accounts to run. The top level is the `default` account; `accounts.<id>` add devices that
 * inherit the top level's settings except its `authDir` (each device has its own credentials). The
 * default account is left out when other accounts exist and it is not named itself. A relative
 * `authDir` is read from `$SWITCHBOARD_HOME`.
 */
export function resolveWhatsAppAccounts(config: WhatsAppConfig, home: string): WhatsAppAccount[] {
  const { accounts = {}, ...top } = config;
  const { authDir: _ownDir, ...shared } = top;
  const entries = new Map<string, WhatsAppSettings>();
  if (Object.keys(accounts).length === 0) entries.set(DEFAULT_ACCOUNT_ID, top);
  for (const [rawId, fields] of Object.entries(accounts)) {
    const id = normalizeAccountId(rawId);
    entries.set(id, { ...(id === DEFAULT_ACCOUNT_ID ? top : shared), ...fields });
  }
  return [...entries]
    .filter(([, settings]) => settings.enabled !== false)
    .map(([accountId, settings]) => ({
      accountId,
      authDir: settings.authDir ? path.resolve(home, settings.authDir) : defaultAuthDir(home, accountId),
      settings,
    }));
}
