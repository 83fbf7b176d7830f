import { type DeliveryContext, DeliveryError, type TargetCodec } from "../../src/index.js";

/** Where a Discord message goes: a channel (guild channel, thread or DM channel), or a user whose DM is opened first. */
export type DiscordTarget = { kind: "channel"; id: string } | { kind: "user"; id: string };

const SNOWFLAKE = /^\d{1,20}$/;

function badTarget(text: string, why: string): DeliveryError {
  return new DeliveryError(
    `"${text}" is not a Discord target: ${why}. Write channel:<id> (a channel, thread or DM channel) or user:<id> (opens a DM), e.g. discord:channel:123456789012345678.`,
    { retryable: false, reason: "bad_target" },
  );
}

/**
 * Reads a target someone wrote: `channel:<id>`, `user:<id>`, or a `<@id>` mention (a user). A
 * leaked `discord:` prefix is tolerated. A bare number is refused: it could be a channel or a user.
 */
function parseDiscordTargetText(text: string): DiscordTarget {
  const raw = text.trim().replace(/^discord:/i, "");
  const mention = /^<@!?(\d+)>$/.exec(raw);
  if (mention) return { kind: "user", id: mention[1]! };
  const match = /^(channel|user):(.*)$/i.exec(raw);
  if (!match) {
    if (SNOWFLAKE.test(raw)) throw badTarget(text, "a bare id could be a channel or a user");
    throw badTarget(text, "unknown form");
  }
  const id = match[2]!.trim();
  if (!SNOWFLAKE.test(id)) throw badTarget(text, `"${id}" is not a Discord id (a number)`);
  return { kind: match[1]!.toLowerCase() as DiscordTarget["kind"], id };
}

/**
 * Reads a delivery context. Sessions record the channel id they came from as a bare `to` (the chat
 * id of the inbound message), so a bare id here is a channel; every other form is read as above.
 */
export function parseDiscordTarget(target: DeliveryContext): DiscordTarget {
  const to = (target.to ?? "").trim();
  if (SNOWFLAKE.test(to)) return { kind: "channel", id: to };
  return parseDiscordTargetText(to);
}

/** Discord's targets: `channel:<id>` (a guild channel, a thread or a DM channel) and `user:<id>` (opens the DM). */
export const discordTargets: TargetCodec = {
  encode: (target) => {
    const parsed = parseDiscordTarget(target);
    return `${parsed.kind}:${parsed.id}`;
  },
  decode: (text) => {
    const parsed = parseDiscordTargetText(text);
    return { channel: "discord", to: `${parsed.kind}:${parsed.id}` };
  },
};
