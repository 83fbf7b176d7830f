import { DiscordAPIError, HTTPError, RateLimitError } from "discord.js";
import { DeliveryError, ErrorCodes, SwitchboardError, accountConfigPath } from "../../src/index.js";

/** Discord's JSON error codes the adapter treats specially. */
export const DiscordCodes = {
  UNKNOWN_CHANNEL: 10003,
  UNKNOWN_MESSAGE: 10008,
  UNKNOWN_INTERACTION: 10062,
  INTERACTION_ALREADY_ACKNOWLEDGED: 40060,
  CANNOT_DM_USER: 50007,
  MISSING_ACCESS: 50001,
  MISSING_PERMISSIONS: 50013,
} as const;

/** The Discord error code of a failed REST call, if Discord sent one. */
export function discordCodeOf(err: unknown): number | undefined {
  return err instanceof DiscordAPIError && typeof err.code === "number" ? err.code : undefined;
}

/**
 * A short, token-free description of a failed REST call for logs. The bot token travels in a
 * header, never in a URL; interaction tokens do sit in webhook URLs, so paths are left out.
 */
export function describeDiscordError(err: unknown): string {
  if (err instanceof DiscordAPIError) return `${err.method.toUpperCase()} ${err.status} ${err.code}: ${err.message}`;
  if (err instanceof HTTPError) return `${err.method.toUpperCase()} ${err.status}: ${err.message}`;
  if (err instanceof RateLimitError) return `rate limited for ${err.retryAfter} ms on ${err.route}`;
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code ?? (err.cause as { code?: unknown } | undefined)?.code;
    return `${err.name}: ${err.message}${typeof code === "string" ? ` (${code})` : ""}`;
  }
  return String(err);
}

function final(message: string, reason: string): DeliveryError {
  return new DeliveryError(message, { retryable: false, reason });
}

/** What {@link toDeliveryError} knows about the failed send. */
export interface SendFailureContext {
  /** `channel 123` or `user 456`, for the message */
  target: string;
  /** the permissions the bot lacks there, when the channel cache could tell */
  missingPermissions?: readonly string[];
}

/**
 * Turns a failed send into the {@link DeliveryError} the delivery gate understands. discord.js waits
 * out short 429s itself; a long one arrives as a RateLimitError and is retried after its wait.
 * Network trouble and 5xx are retried by the gate's backoff (discord.js is told not to retry them).
 * A user who blocks DMs (50007), missing permissions (50013) and an unknown channel (10003) are final.
 */
export function toDeliveryError(err: unknown, context: SendFailureContext): DeliveryError {
  if (err instanceof DeliveryError) return err;
  if (err instanceof RateLimitError)
    return new DeliveryError(`Discord rate limit on ${err.route}: retry after ${err.retryAfter} ms`, {
      retryable: true,
      reason: "rate_limited",
      retryAfterMs: Math.max(1, err.retryAfter),
    });
  if (err instanceof HTTPError || (err instanceof DiscordAPIError && err.status >= 500))
    return new DeliveryError(`Discord server error: ${describeDiscordError(err)}`, {
      retryable: true,
      reason: "server_error",
    });
  if (!(err instanceof DiscordAPIError))
    return new DeliveryError(`Discord unreachable: ${describeDiscordError(err)}`, {
      retryable: true,
      reason: "network",
    });
  return apiRefusal(err, context);
}

/** A refusal from Discord's API that no retry fixes, with what to do about it. */
function apiRefusal(err: DiscordAPIError, context: SendFailureContext): DeliveryError {
  const { target } = context;
  switch (err.code) {
    case DiscordCodes.CANNOT_DM_USER:
      return final(
        `Discord refused the DM to ${target}: the user does not accept DMs from this bot (they block it, or allow DMs only from friends), or shares no server with it.`,
        "blocked",
      );
    case DiscordCodes.MISSING_PERMISSIONS: {
      const missing = context.missingPermissions?.length
        ? context.missingPermissions.join(", ")
        : "ViewChannel, SendMessages (SendMessagesInThreads in a thread)";
      return final(
        `The bot lacks permission to write in ${target}: missing ${missing}. Grant it in the channel's or the role's permissions.`,
        "missing_permissions",
      );
    }
    case DiscordCodes.MISSING_ACCESS:
      return final(`The bot cannot see ${target} (missing access): add it to that server or channel.`, "forbidden");
    case DiscordCodes.UNKNOWN_CHANNEL:
      return final(
        `Discord does not know ${target}: the channel or thread was deleted, or the bot is not in that server.`,
        "chat_not_found",
      );
  }
  if (err.status === 401)
    return final(
      "Discord rejected the bot token (401). Check channels.discord.token or DISCORD_BOT_TOKEN.",
      "unauthorized",
    );
  return final(`Discord refused the message to ${target}: ${describeDiscordError(err)}`, "bad_request");
}

/** The error a refused privileged intent (close code 4014) fails the start with. */
export function disallowedIntentsError(accountId: string): SwitchboardError {
  return new SwitchboardError(
    ErrorCodes.CONFIG_INVALID,
    `Discord refused the Message Content intent for ${accountConfigPath("discord", accountId)} (gateway close 4014). Switch it on: Discord developer portal > your application > Bot > Privileged Gateway Intents > Message Content Intent, then restart.`,
  );
}

/** The error a bot token Discord rejected (close 4004, or 401 at login) fails the start with. */
export function invalidTokenError(accountId: string, detail: string): SwitchboardError {
  return new SwitchboardError(
    ErrorCodes.CONFIG_INVALID,
    `Discord rejected the bot token of ${accountConfigPath("discord", accountId)} (${detail}). Copy it again from the Discord developer portal > your application > Bot > Reset Token.`,
  );
}
