import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { toInbound } from "../../../adapters/discord/index.js";
import { MalformedMessageError } from "../../../adapters/discord/message-shape.js";
import { InboundMessageSchema } from "../../../src/index.js";
import { DISCORD_BOT } from "../../fakes/fake-discord-server.js";

const bot = DISCORD_BOT.user;
const snowflake = fc.bigInt({ min: 1n, max: 2n ** 63n }).map(String);
const user = fc.record({
  id: snowflake,
  username: fc.string(),
  global_name: fc.option(fc.string()),
  bot: fc.boolean(),
});
const message = fc.record(
  {
    id: snowflake,
    channel_id: snowflake,
    guild_id: snowflake,
    author: user,
    content: fc.string(),
    timestamp: fc.oneof(
      fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
      fc.string(),
    ),
    type: fc.integer({ min: 0, max: 30 }),
    mentions: fc.array(user, { maxLength: 3 }),
    referenced_message: fc.option(fc.record({ id: snowflake, content: fc.string(), author: user })),
  },
  { requiredKeys: [] },
);

describe("toInbound (discord) on arbitrary payloads", () => {
  it("returns a valid message or null, or refuses the payload by name; never anything else", () => {
    fc.assert(
      fc.property(
        fc.oneof(message, fc.anything()),
        fc.option(fc.record({ type: fc.integer({ min: 0, max: 16 }), name: fc.string() })),
        (payload, channel) => {
          try {
            const result = toInbound({ message: payload as never, ...(channel && { channel }) }, bot);
            if (result) expect(InboundMessageSchema.parse(result)).toEqual(result);
          } catch (err) {
            expect(err).toBeInstanceOf(MalformedMessageError);
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});
