import { type APIUser, type Client, ClientUser, DiscordAPIError, Routes } from "discord.js";
import { type AccountClient, type AccountClientDeps, createClient } from "./account-client.js";
import type { DiscordAccount } from "./discord-accounts.js";
import { invalidTokenError } from "./discord-errors.js";

/** ClientUser's constructor, which discord.js's typings keep to itself (its READY handler calls it). */
const ClientUserOf = ClientUser as unknown as new (client: Client, data: APIUser) => ClientUser;

/**
 * Starts one account send-only (`AdapterStartContext.receive` false): another gateway holds the
 * account's gateway connection and registered its slash commands. This client never logs in (no
 * gateway connection, no IDENTIFY, no gateway session row read or written); it sends and types
 * through REST with the token set. It asks Discord who the bot is first (`GET /users/@me`): opening
 * a DM needs the bot's own id, and a rejected token fails the start with the holder's error (so
 * does an unreachable Discord, as the holder's login does).
 */
export async function startSendOnlyClient(
  account: DiscordAccount,
  deps: Pick<AccountClientDeps, "logger" | "maxRateLimitWaitMs">,
): Promise<AccountClient> {
  const client = createClient(account, deps);
  client.rest.setToken(account.token);
  try {
    client.user = new ClientUserOf(client, await whoAmI(client, account));
  } catch (err) {
    await client.destroy();
    throw err;
  }
  deps.logger.info({ accountId: account.accountId, botId: client.user.id }, "discord bot ready to send (send-only)");
  // Sends read only `rest`, `user`, and `channels` (a DM channel opened by REST is cached there).
  return { account, client: client as Client<true>, stop: () => client.destroy() };
}

/** The bot's own user; a 401 is the config error the holder's login gives. */
async function whoAmI(client: Client, account: DiscordAccount): Promise<APIUser> {
  try {
    return (await client.rest.get(Routes.user())) as APIUser;
  } catch (err) {
    if (err instanceof DiscordAPIError && err.status === 401)
      throw invalidTokenError(account.accountId, "401 Unauthorized");
    throw err;
  }
}
