import { describe, expect, it } from "vitest";
import { STRINGS } from "../../src/commands/command-strings.js";
import type { AccessDecision } from "../../src/inbound/access.js";
import { decide } from "../../src/inbound/inbound-decision.js";

const TALKER: AccessDecision = { allowed: true, commands: false, owner: false, needsMention: false };
const OWNER: AccessDecision = { allowed: true, commands: true, owner: true, needsMention: false };
const COMMAND_ONLY: AccessDecision = {
  allowed: false,
  commands: true,
  owner: false,
  needsMention: false,
  reason: "commands-only",
};
const STRANGER: AccessDecision = {
  allowed: false,
  commands: false,
  owner: false,
  needsMention: false,
  reason: "dm-pairing",
  pairing: true,
};
const UNMENTIONED: AccessDecision = { ...OWNER, needsMention: true };
const RESET = { reset: { firstMessage: "", said: "/new" } };

describe("decide", () => {
  it("ignores a stranger, whatever the message is, and says whether they may get a pairing code", () => {
    expect(decide({ access: STRANGER, outcome: { reply: "pong" } })).toEqual({
      kind: "ignore",
      reason: "dm-pairing",
      refused: true,
      pairing: true,
    });
    expect(decide({ access: { ...STRANGER, reason: undefined, pairing: undefined } as AccessDecision })).toEqual({
      kind: "ignore",
      reason: "not-allowed",
      refused: true,
    });
  });

  it("answers a command's outcome and keeps it in the history unless it was refused", () => {
    expect(decide({ access: OWNER, outcome: { reply: "pong" } })).toEqual({
      kind: "answer",
      outcome: { reply: "pong" },
      record: true,
    });
    const refused = { reply: STRINGS.refusedCommands, refused: true as const };
    expect(decide({ access: TALKER, outcome: refused })).toEqual({ kind: "answer", outcome: refused, record: false });
  });

  it("answers a replayed command that already ran with nothing, and does not keep it twice", () => {
    expect(decide({ access: OWNER, alreadyRan: true })).toEqual({ kind: "answer", outcome: {}, record: false });
  });

  it("answers a native command the core does not know, privately, without keeping it", () => {
    expect(decide({ access: OWNER, outcome: null, unknownNative: "frobnicate" })).toEqual({
      kind: "answer",
      outcome: { reply: STRINGS.unknownCommand("frobnicate"), ephemeral: true },
      record: false,
    });
  });

  it("runs a turn for plain text from a sender who may talk", () => {
    expect(decide({ access: TALKER, outcome: null })).toEqual({ kind: "turn" });
  });

  it("carries a reset into the turn as data", () => {
    const reset = { firstMessage: "hi", said: "/new gpt-4o hi", model: { provider: "openai", model: "gpt-4o" } };
    expect(decide({ access: OWNER, outcome: { reset } })).toEqual({ kind: "turn", reset });
  });

  it("ignores a command user's plain text and their reset: running commands does not imply talking", () => {
    const ignored = { kind: "ignore", reason: "commands-only", refused: true };
    expect(decide({ access: COMMAND_ONLY, outcome: null })).toEqual(ignored);
    expect(decide({ access: COMMAND_ONLY, outcome: RESET })).toEqual(ignored);
  });

  it("ignores an unmentioned group message without a refusal, but lets a reset addressed to the bot through", () => {
    expect(decide({ access: UNMENTIONED, outcome: null })).toEqual({
      kind: "ignore",
      reason: "not-mentioned",
      refused: false,
    });
    expect(decide({ access: UNMENTIONED, outcome: RESET })).toEqual({ kind: "turn", reset: RESET.reset });
  });

  it("is pure: the same facts give the same decision and are not changed", () => {
    const facts = { access: OWNER, outcome: { reply: "pong" } };
    const copy = structuredClone(facts);
    expect(decide(facts)).toEqual(decide(copy));
    expect(facts).toEqual(copy);
  });
});
