import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  buildSessionKey,
  buildSessionKeyByParsing,
  canonicalizeSessionKey,
  formatSessionKey,
  parseSessionKey,
} from "../../src/routing/index.js";
import type { SessionKeyInput, SessionKeyParts } from "../../src/routing/index.js";

const RESERVED = [
  "dm",
  "group",
  "channel",
  "thread",
  "topic",
  "slash",
  "cron",
  "hook",
  "node",
  "subagent",
  "acp",
  "global",
  "unknown",
];

const agentId = fc.stringMatching(/^[a-z0-9][a-z0-9_-]{0,20}$/);
const channel = fc.constantFrom("telegram", "discord", "whatsapp", "webchat", "slack");
const accountId = fc.stringMatching(/^[a-z0-9][a-z0-9_-]{0,12}$/).filter((a) => !RESERVED.includes(a));
/** Platform ids: any printable text, colons included, trimmed, never holding the two structural markers. */
const platformId = fc
  .string({ minLength: 1, maxLength: 24, unit: fc.constantFrom(..."aAbZ09:-_+@.é ".split("")) })
  .map((s) => s.trim())
  .filter((s) => s.length > 0 && !/:(thread|topic):/i.test(`:${s}:`) && !s.startsWith(":") && !s.endsWith(":"));
const internalId = fc.stringMatching(/^[a-z0-9][a-z0-9-]{0,20}$/);
const optionalThread = fc.option(platformId, { nil: undefined });

const parts: fc.Arbitrary<SessionKeyParts> = fc.oneof(
  fc.record({
    kind: fc.constant("main" as const),
    agentId,
    mainKey: fc.constantFrom("main", "work"),
    threadId: optionalThread,
  }),
  fc.record({ kind: fc.constant("dm" as const), agentId, peerId: platformId, threadId: optionalThread }),
  fc.record({ kind: fc.constant("dm" as const), agentId, channel, peerId: platformId, threadId: optionalThread }),
  fc.record({
    kind: fc.constant("dm" as const),
    agentId,
    channel,
    accountId,
    peerId: platformId,
    threadId: optionalThread,
  }),
  fc.record({
    kind: fc.constant("group" as const),
    agentId,
    channel,
    peerId: platformId,
    topicId: optionalThread,
    threadId: optionalThread,
  }),
  fc.record({ kind: fc.constant("channel" as const), agentId, channel, peerId: platformId, threadId: optionalThread }),
  fc.record({
    kind: fc.constantFrom("cron" as const, "hook" as const, "node" as const, "subagent" as const),
    agentId,
    id: internalId,
  }),
);

function withoutUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

describe("formatSessionKey / parseSessionKey", () => {
  it("round-trips every key shape: parse(format(parts)) gives the parts back", () => {
    fc.assert(
      fc.property(parts, (p) => {
        const mainKey = p.kind === "main" ? p.mainKey : undefined;
        const parsed = parseSessionKey(formatSessionKey(p), { mainKey });
        expect(parsed).not.toBeNull();
        expect(parsed).toMatchObject(withoutUndefined(p));
        expect(parsed!.key).toBe(formatSessionKey(p));
      }),
      { numRuns: 2000 },
    );
  });

  it("keeps ids that contain ':' intact", () => {
    const key = formatSessionKey({
      kind: "group",
      agentId: "main",
      channel: "slack",
      peerId: "T1:C:42",
      threadId: "17:2",
    });
    expect(key).toBe("agent:main:slack:group:T1:C:42:thread:17:2");
    expect(parseSessionKey(key)).toMatchObject({ kind: "group", peerId: "T1:C:42", threadId: "17:2" });
  });
});

describe("canonicalizeSessionKey", () => {
  it("is idempotent for any input text", () => {
    const ctx = fc.record({
      mainKey: fc.constantFrom("main", "work"),
      defaultAgentId: fc.constantFrom("main", "Ops"),
      scope: fc.constantFrom("per-sender" as const, "global" as const),
    });
    const words = fc.constantFrom(
      "agent",
      "Main",
      "work",
      "dm",
      "group",
      "channel",
      "topic",
      "thread",
      "node-",
      "node",
      "cron",
      "@g.us",
      "whatsapp",
      ":",
      " ",
      "X",
      "global",
      "subagent",
      "slash",
    );
    const text = fc.oneof(
      fc.string({ maxLength: 40 }),
      parts.map(formatSessionKey),
      fc.array(words, { maxLength: 10 }).map((w) => w.join(":")),
      fc.array(words, { maxLength: 10 }).map((w) => w.join("")),
    );
    fc.assert(
      fc.property(text, ctx, (raw, c) => {
        const once = canonicalizeSessionKey(raw, c);
        if (once === null) return;
        expect(canonicalizeSessionKey(once, c)).toBe(once);
      }),
      { numRuns: 3000 },
    );
  });

  it("gives one spelling whatever the case of the structural words", () => {
    expect(canonicalizeSessionKey("AGENT:Main:TELEGRAM:Group:-100:TOPIC:9")).toBe(
      "agent:main:telegram:group:-100:topic:9",
    );
  });
});

describe("buildSessionKey", () => {
  const base = { agentId: "main", accountId: "default" } as const;
  const peer = fc.record({
    channel,
    accountId,
    kind: fc.constantFrom("dm" as const, "group" as const, "channel" as const),
    id: platformId,
  });

  it.each(["per-channel-peer", "per-account-channel-peer"] as const)(
    "never gives two different peers one key (dmScope %s)",
    (dmScope) => {
      fc.assert(
        fc.property(peer, peer, (a, b) => {
          fc.pre(
            a.channel !== b.channel ||
              a.kind !== b.kind ||
              a.id !== b.id ||
              (dmScope === "per-account-channel-peer" && a.kind === "dm" && a.accountId !== b.accountId),
          );
          const key = (p: typeof a) =>
            buildSessionKey({ ...base, ...p, peer: { kind: p.kind, id: p.id }, dmScope }).key;
          expect(key(a)).not.toBe(key(b));
        }),
        { numRuns: 2000 },
      );
    },
  );

  it("never gives two different DM senders one key under per-peer, and never mixes DMs with groups", () => {
    fc.assert(
      fc.property(platformId, platformId, channel, (a, b, ch) => {
        fc.pre(a !== b);
        const input = (id: string, kind: "dm" | "group"): SessionKeyInput => ({
          ...base,
          channel: ch,
          peer: { kind, id },
          dmScope: "per-peer",
        });
        expect(buildSessionKey(input(a, "dm")).key).not.toBe(buildSessionKey(input(b, "dm")).key);
        expect(buildSessionKey(input(a, "dm")).key).not.toBe(buildSessionKey(input(a, "group")).key);
      }),
      { numRuns: 1000 },
    );
  });

  const anyInput: fc.Arbitrary<SessionKeyInput> = fc.record(
    {
      agentId: fc.constantFrom("main", "Ops", "my agent!", "b"),
      channel: fc.constantFrom("telegram", "Telegram ", "discord", "whatsapp", "dm", "node-x", "a:b"),
      accountId: fc.option(fc.constantFrom("default", "Work", "biz", "group", "dm", " "), { nil: undefined }),
      peer: fc.option(
        fc.record({
          kind: fc.constantFrom("dm" as const, "group" as const, "channel" as const),
          id: fc.oneof(platformId, fc.constantFrom("", "  ", "111", "Ada")),
        }),
        { nil: undefined },
      ),
      topicId: fc.option(fc.oneof(platformId, fc.constant("  ")), { nil: undefined }),
      threadId: fc.option(fc.oneof(platformId, fc.constant(" ")), { nil: undefined }),
      dmScope: fc.constantFrom(
        "main" as const,
        "per-peer" as const,
        "per-channel-peer" as const,
        "per-account-channel-peer" as const,
      ),
      identityLinks: fc.option(fc.constant({ Alice: ["Telegram:111", "Ada"], "bob:x": ["discord:222"] }), {
        nil: undefined,
      }),
      mainKey: fc.option(fc.constantFrom("main", "work", "Work", ""), { nil: undefined }),
      scope: fc.option(fc.constantFrom("per-sender" as const, "global" as const), { nil: undefined }),
    },
    { requiredKeys: ["agentId", "channel", "dmScope"] },
  );

  it("types the key exactly as writing it and parsing it back does, for any input (the fast path and the reference agree)", () => {
    fc.assert(
      fc.property(anyInput, (input) => {
        let reference: unknown;
        try {
          reference = buildSessionKeyByParsing(input);
        } catch (err) {
          expect(() => buildSessionKey(input)).toThrow((err as Error).message);
          return;
        }
        const built = buildSessionKey(input);
        expect(built).toStrictEqual(reference);
        expect(parseSessionKey(built.key, { mainKey: input.mainKey, scope: input.scope })).toStrictEqual(built);
      }),
      { numRuns: 5000 },
    );
  });

  it("builds the forum topic key of a Telegram supergroup", () => {
    const key = buildSessionKey({
      ...base,
      channel: "telegram",
      peer: { kind: "group", id: "-1001234567890" },
      topicId: "99",
      dmScope: "main",
    });
    expect(key).toMatchObject({
      key: "agent:main:telegram:group:-1001234567890:topic:99",
      kind: "group",
      peerId: "-1001234567890",
      topicId: "99",
      chatType: "group",
    });
  });

  it("puts every chat into the global session under scope global", () => {
    const key = buildSessionKey({
      ...base,
      channel: "discord",
      peer: { kind: "channel", id: "c1" },
      dmScope: "per-peer",
      scope: "global",
    });
    expect(key).toMatchObject({ key: "global", kind: "global" });
  });
});
