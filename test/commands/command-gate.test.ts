import { describe, expect, it } from "vitest";
import type { CommandContext, CommandSender } from "../../src/commands/command-context.js";
import { type CommandAccess, authorizeCommand, ownsSession, refusal } from "../../src/commands/command-gate.js";
import { STRINGS } from "../../src/commands/command-strings.js";
import { InboundMessageSchema } from "../../src/routing/inbound-message.js";
import { parseSessionKey } from "../../src/routing/parse-session-key.js";
import { COMMAND_ONLY, COMMAND_USER, OWNER, TALKER } from "./command-harness.js";

function context(
  key: string,
  sender: CommandSender,
  from = "42",
  chatType: "direct" | "group" = "direct",
  channel = "telegram",
): CommandContext {
  const message = InboundMessageSchema.parse({
    channel,
    chat: { type: chatType, id: chatType === "direct" ? from : "-100" },
    sender: { id: from },
    text: "/new",
  });
  return { message, sessionKey: parseSessionKey(key)!, agentId: "main", sender };
}

const LINKS = { ada: ["telegram:42", "discord:777"] };

describe("ownsSession", () => {
  it.each<[string, CommandContext, boolean]>([
    ["the sender's own DM (per channel and peer)", context("agent:main:telegram:dm:42", COMMAND_USER), true],
    ["the sender's own DM (per peer)", context("agent:main:dm:42", COMMAND_USER), true],
    ["the sender's own DM (per account)", context("agent:main:telegram:work:dm:42", COMMAND_USER), true],
    ["the sender's own DM thread", context("agent:main:telegram:dm:42:thread:7", COMMAND_USER), true],
    ["the DM of a linked identity of the sender", context("agent:main:dm:ada", COMMAND_USER, "42"), true],
    [
      "the same linked identity from another channel",
      context("agent:main:dm:ada", COMMAND_USER, "777", "direct", "discord"),
      true,
    ],
    ["someone else's linked identity", context("agent:main:dm:ada", COMMAND_USER, "43"), false],
    ["someone else's DM", context("agent:main:telegram:dm:43", COMMAND_USER), false],
    ["a DM key of another channel", context("agent:main:discord:dm:42", COMMAND_USER), false],
    ["the shared main session (dmScope main)", context("agent:main:main", COMMAND_USER), false],
    ["a group", context("agent:main:telegram:group:-100", COMMAND_USER, "42", "group"), false],
  ])("%s: %s", (_name, ctx, expected) => {
    expect(ownsSession(ctx, LINKS)).toBe(expected);
  });
});

describe("authorizeCommand", () => {
  const ownDm = "agent:main:telegram:dm:42";
  const shared = "agent:main:main";
  it.each<[CommandAccess, string, CommandSender, boolean]>([
    ["owner", shared, OWNER, true],
    ["owner", ownDm, COMMAND_USER, false],
    ["owner", ownDm, TALKER, false],
    ["commands", shared, OWNER, true],
    ["commands", shared, COMMAND_USER, true],
    ["commands", ownDm, TALKER, false],
    ["own-session", shared, OWNER, true],
    ["own-session", ownDm, COMMAND_USER, true],
    ["own-session", shared, COMMAND_USER, false],
    ["own-session", ownDm, TALKER, false],
    ["commands", shared, COMMAND_ONLY, true],
    ["own-session", ownDm, COMMAND_ONLY, false],
  ])("%s access on %s for %o: %s", (access, key, sender, expected) => {
    expect(authorizeCommand(access, context(key, sender))).toBe(expected);
  });
});

describe("refusal", () => {
  it("answers once in a DM, saying which tier is missing", () => {
    expect(refusal("owner", "/send", context("agent:main:telegram:dm:42", COMMAND_USER))).toEqual({
      reply: STRINGS.refusedOwner("/send"),
      refused: true,
    });
    expect(refusal("own-session", "/new", context("agent:main:main", COMMAND_USER))).toEqual({
      reply: STRINGS.refusedOwnSession("/new"),
      refused: true,
    });
    expect(refusal("commands", "/status", context("agent:main:telegram:dm:42", TALKER))).toEqual({
      reply: STRINGS.refusedCommands,
      refused: true,
    });
    expect(refusal("own-session", "/new", context("agent:main:telegram:dm:42", COMMAND_ONLY))).toEqual({
      reply: STRINGS.refusedNoTalk("/new"),
      refused: true,
    });
  });

  it("stays silent in a group", () => {
    expect(refusal("owner", "/send", context("agent:main:telegram:group:-100", COMMAND_USER, "42", "group"))).toEqual({
      refused: true,
    });
  });
});
