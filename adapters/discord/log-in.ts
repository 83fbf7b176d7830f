import { type Client, Events, GatewayCloseCodes } from "discord.js";
import { accountConfigPath } from "../../src/index.js";
import type { DiscordAccount } from "./discord-accounts.js";
import { disallowedIntentsError, invalidTokenError } from "./discord-errors.js";

/** Resolves on READY; rejects with a clear error when the token or the intents are refused, or on timeout. */
function waitReady(client: Client, account: DiscordAccount, timeoutMs: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      cleanup();
      reject(
        new Error(
          `Discord gateway did not get ready within ${timeoutMs} ms (${accountConfigPath("discord", account.accountId)})`,
        ),
      );
    }, timeoutMs);
    const onReady = () => {
      cleanup();
      resolve();
    };
    const onDisconnect = (event: { code: number }) => {
      cleanup();
      if (event.code === GatewayCloseCodes.DisallowedIntents) reject(disallowedIntentsError(account.accountId));
      else if (event.code === GatewayCloseCodes.AuthenticationFailed)
        reject(invalidTokenError(account.accountId, "gateway close 4004"));
      else reject(new Error(`Discord gateway closed the connection with code ${event.code}`));
    };
    function cleanup() {
      clearTimeout(timer);
      client.off(Events.ClientReady, onReady);
      client.off(Events.ShardDisconnect, onDisconnect);
    }
    client.once(Events.ClientReady, onReady);
    client.on(Events.ShardDisconnect, onDisconnect);
  });
}

/** Logs in and waits for READY; a failed start destroys the client and says what to fix. */
export async function logIn(client: Client, account: DiscordAccount, readyTimeoutMs: number): Promise<Client<true>> {
  try {
    const ready = waitReady(client, account, readyTimeoutMs);
    await Promise.all([
      client.login(account.token).catch((err: unknown) => {
        const code = (err as { code?: unknown }).code;
        if (code === "TokenInvalid") throw invalidTokenError(account.accountId, "401 Unauthorized");
        throw err;
      }),
      ready,
    ]);
  } catch (err) {
    await client.destroy();
    throw err;
  }
  return client as Client<true>;
}
