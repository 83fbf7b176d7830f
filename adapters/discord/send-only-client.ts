import { type APIUser, type Client, ClientUser, DiscordAPIError, Routes } from "discord.js";
import { type AccountClient, type AccountClientDeps, createClient } from "./account-client.js";
import type { DiscordAccount } from "./discord-accounts.js";
import { describeDiscordError, invalidTokenError } from "./discord-errors.js";

/** ClientUser's constructor, which discord.js's typings keep to itself (its READY handler calls it). */
const ClientUserOf = ClientUser as unknown as new (client: Client, data: APIUser) => ClientUser;

/**
 * Starts one account send-only (`AdapterStartContext.receive` false): another gateway holds the
 * account's gateway connection and registered its slash commands. This client never logs in (no
 * gateway connection, no IDENTIFY, no gateway session row read or written); it sends and types
 * through REST with the token set. It asks Discord who the bot is first (`GET /users/@me`): opening
 * a DM needs the bot's own id. A rejected token (401) fails the start with the holder's error: no
 * retry fixes it. Discord away (5xx, no connection) does not: the account starts, reports itself not
 * connected, and each send asks again first, so sends fail (retryable) until Discord answers and the
 * delivery gate retries them as any failed send. A partition core then opens through a Discord outage.
 */
export async function startSendOnlyClient(
  account: DiscordAccount,
  deps: Pick<AccountClientDeps, "logger" | "maxRateLimitWaitMs">,
): Promise<AccountClient> {
  const client = createClient(account, deps);
  client.rest.setToken(account.token);
  const bot = botUser(client, account, deps);
  try {
    await bot.ready();
  } catch (err) {
    if (!(err instanceof DiscordAPIError && err.status === 401)) {
      const fields = { accountId: account.accountId, err: describeDiscordError(err) };
      deps.logger.warn(
        fields,
        "discord unreachable at a send-only start: starting anyway, sends retry until it answers",
      );
      return { account, client: client as Client<true>, stop: () => client.destroy(), ...bot };
    }
    await client.destroy();
    throw invalidTokenError(account.accountId, "401 Unauthorized");
  }
  // Sends read only `rest`, `user`, and `channels` (a DM channel opened by REST is cached there).
  return { account, client: client as Client<true>, stop: () => client.destroy(), ...bot };
}

/**
 * The bot's own user, asked until Discord answers: `ready` (before every send) resolves once it is
 * known and rejects with Discord's error otherwise; `health` says whether it is known.
 */
function botUser(client: Client, account: DiscordAccount, deps: Pick<AccountClientDeps, "logger">) {
  let asking: Promise<void> | undefined;
  let lastError: string | undefined = "not asked Discord who the bot is yet";
  const ask = async () => {
    try {
      client.user = new ClientUserOf(client, (await client.rest.get(Routes.user())) as APIUser);
      lastError = undefined;
      deps.logger.info(
        { accountId: account.accountId, botId: client.user.id },
        "discord bot ready to send (send-only)",
      );
    } catch (err) {
      lastError = `send-only, Discord not reached yet (sends are retried): ${describeDiscordError(err)}`;
      throw err;
    } finally {
      asking = undefined;
    }
  };
  return {
    ready(): Promise<void> {
      if (client.user) return Promise.resolve();
      asking ??= ask();
      return asking;
    },
    health: () => (lastError === undefined ? { connected: true } : { connected: false, lastError }),
  };
}
