// The contract every channel adapter runs: its pure inbound mapping against real payload fixtures,
// its target codec, its sends against the adapter's fake platform, and the live loop (start with a
// sink, a person writes, the reply goes out, the bot's own messages are ignored, stop leaves nothing
// open). Telegram runs it today; Discord and WhatsApp call runAdapterContract with their own
// fixtures, mapping, sample targets and fake platform, and need no change here.
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { routeOf } from "../../src/agents/agent-runtime.js";
import {
  type ChannelAdapter,
  type DeliveryContext,
  DeliveryError,
  type InboundMessage,
  InboundMessageSchema,
} from "../../src/index.js";
import { testStartContext } from "../support/channel-context.js";

/** A message as the fake platform shows it to users, in terms every platform shares. */
interface ContractSend {
  to: string;
  threadId?: string;
  /** the visible text (markup already rendered by the platform) */
  text: string;
}

/** The ways a send can fail that every platform has. */
export type ContractFailure = "rate_limited" | "chat_not_found" | "network";

/** A started adapter wired to its fake platform. */
export interface ContractPlatform {
  adapter: ChannelAdapter;
  /** a chat the platform knows */
  target: DeliveryContext;
  /** a thread or topic inside a chat (required when the contract says `threads`) */
  threadTarget?: DeliveryContext;
  /** messages the platform accepted, oldest first */
  sent(): ContractSend[];
  /** makes the platform fail the next send */
  failNextSend(failure: ContractFailure): void;
  close(): Promise<void>;
}

/**
 * An adapter built against its fake platform but not started: the contract starts it with its own
 * sink. Every method acts on the fake platform, never on the adapter.
 */
export interface ContractLive {
  adapter: ChannelAdapter;
  /** a person writes `text` to the bot in a direct chat; resolves once the platform has queued the event */
  userWrites(text: string): Promise<void>;
  /**
   * A message written by the bot itself shows up as an inbound event in the same chat (the
   * platform's echo of its own send: Discord's MESSAGE_CREATE, WhatsApp's `fromMe`, a Telegram
   * update from the bot's id). The adapter must not hand it to the sink.
   */
  botWrites(text: string): Promise<void>;
  /** messages the platform accepted from the adapter, oldest first */
  sent(): ContractSend[];
  /** connections (HTTP, WebSocket) the adapter holds open to the fake platform right now */
  openConnections(): number;
  /** closes the fake platform (the contract has already stopped the adapter) */
  close(): Promise<void>;
}

/** What an adapter brings to the contract. */
export interface AdapterContract<E> {
  /** the adapter's id and every message's `channel` */
  channel: string;
  /** a folder of `<name>.json` real platform payloads */
  fixturesDir: string;
  /** the adapter's pure mapping, bound to a fixed bot identity */
  toInbound: (event: E) => InboundMessage | null;
  /** per fixture name: the fields the message must have (undefined = absent), or null when it must be dropped */
  inbound: Record<string, Record<string, unknown> | null>;
  /** whether the platform has threads or topics a target can name */
  threads: boolean;
  /** the platform's own hard limit on one message's text */
  platformMaxTextLength: number;
  /** a started adapter on its fake platform, for the send tests */
  platform: () => Promise<ContractPlatform>;
  /**
   * The target codec's samples: every kind of target the channel can send to (a DM, a group, a
   * thread or topic), each as `decode` returns it (channel set, `threadId` a string), and texts
   * after `<channel>:` that are not targets of this channel.
   */
  targets: { samples: DeliveryContext[]; bad: string[] };
  /** the adapter on its fake platform, not started, for the live loop */
  live: () => Promise<ContractLive>;
  /** how long the live loop waits for an event to cross the fake platform (default 10 s) */
  liveTimeoutMs?: number;
}

/** Kinds of handles `process.getActiveResourcesInfo()` lists that an adapter could leak. */
const LEAKABLE = new Set(["Timeout", "Immediate", "TCPSocketWrap", "TCPWRAP", "TLSWrap", "PipeWrap"]);

/** How many leakable handles (timers, sockets) the process holds now. */
function leakableHandles(): number {
  return process.getActiveResourcesInfo().filter((kind) => LEAKABLE.has(kind)).length;
}

/** Reads `<dir>/<name>.json`. */
function loadFixture<E>(dir: string, name: string): E {
  return JSON.parse(readFileSync(path.join(dir, `${name}.json`), "utf8")) as E;
}

/** Checks every field `expected` names, recursively; a field expected as undefined must be absent. */
function expectFields(actual: unknown, expected: Record<string, unknown>, at = "message"): void {
  for (const [key, value] of Object.entries(expected)) {
    const got = (actual as Record<string, unknown> | null | undefined)?.[key];
    if (value !== null && typeof value === "object" && !Array.isArray(value))
      expectFields(got, value as Record<string, unknown>, `${at}.${key}`);
    else expect(got, `${at}.${key}`).toEqual(value);
  }
}

/** Registers the contract's tests for one adapter. */
export function runAdapterContract<E>(contract: AdapterContract<E>): void {
  const names = readdirSync(contract.fixturesDir)
    .filter((f) => f.endsWith(".json"))
    .map((f) => f.slice(0, -5))
    .sort();
  const mapped = (name: string) => contract.toInbound(loadFixture<E>(contract.fixturesDir, name));

  describe(`adapter contract: ${contract.channel} toInbound`, () => {
    it("has an expectation for every fixture and a fixture for every expectation", () => {
      expect(Object.keys(contract.inbound).sort()).toEqual(names);
    });

    it.each(Object.entries(contract.inbound))("maps fixture %s", (name, expected) => {
      const message = mapped(name);
      if (expected === null) expect(message).toBeNull();
      else expectFields(message, expected);
    });

    it("returns valid inbound messages of its channel that carry the raw event", () => {
      for (const name of names) {
        const event = loadFixture<E>(contract.fixturesDir, name);
        const message = contract.toInbound(event);
        if (!message) continue;
        expect(InboundMessageSchema.parse(message)).toEqual(message);
        expect(message.channel).toBe(contract.channel);
        expect(message.raw).toEqual(event);
      }
    });

    it("is pure: the same event gives the same message and stays untouched", () => {
      for (const name of names) {
        const event = loadFixture<E>(contract.fixturesDir, name);
        const copy = structuredClone(event);
        expect(contract.toInbound(event)).toEqual(contract.toInbound(copy));
        expect(event).toEqual(copy);
      }
    });
  });

  describe(`adapter contract: ${contract.channel} targets`, () => {
    const codec = () =>
      contract.live().then(async (live) => {
        const { targets } = live.adapter;
        await live.close();
        return targets;
      });

    it("has a sample of every kind, threads included when the channel has them", () => {
      expect(contract.targets.samples.length).toBeGreaterThan(0);
      for (const sample of contract.targets.samples) expect(sample.channel).toBe(contract.channel);
      if (contract.threads) expect(contract.targets.samples.some((t) => t.threadId !== undefined)).toBe(true);
    });

    it.each(contract.targets.samples.map((t) => [JSON.stringify(t), t] as const))(
      "decodes what it encodes: %s",
      async (_, target) => {
        const targets = await codec();
        const text = targets.encode(target);
        expect(text).not.toMatch(new RegExp(`^${contract.channel}:`, "i"));
        expect(targets.decode(text)).toEqual(target);
      },
    );

    it.each(contract.targets.bad.map((t) => [t] as const))(
      "refuses %j with a DeliveryError bad_target naming what it accepts",
      async (text) => {
        const targets = await codec();
        let error: unknown;
        try {
          targets.decode(text);
        } catch (err) {
          error = err;
        }
        expect(error).toBeInstanceOf(DeliveryError);
        expect(error).toMatchObject({ reason: "bad_target", retryable: false });
        expect((error as Error).message.length).toBeGreaterThan(20);
      },
    );
  });

  describe(`adapter contract: ${contract.channel} live loop`, () => {
    const timeout = contract.liveTimeoutMs ?? 10_000;
    let live: ContractLive;
    let started = false;
    beforeEach(async () => {
      live = await contract.live();
      started = false;
    });
    afterEach(async () => {
      if (started) await live.adapter.stop();
      await live.close();
    });

    it(
      "hands a person's message to the sink, sends the reply, ignores its own messages and leaves nothing open after stop",
      async () => {
        const handlesBefore = leakableHandles();
        const received: InboundMessage[] = [];
        const context = await testStartContext(live.adapter.id);
        await live.adapter.start(async (message) => void received.push(message), context);
        started = true;
        // The bot's own message first: once the person's later message arrived, the earlier one was seen.
        await live.botWrites("my own words, echoed back");
        await live.userWrites("hello from the contract");
        await expect.poll(() => received.length, { timeout }).toBeGreaterThan(0);
        expect(received.map((m) => m.text)).toEqual(["hello from the contract"]);
        const message = received[0]!;
        expect(InboundMessageSchema.parse(message)).toEqual(message);
        expect(message).toMatchObject({
          channel: contract.channel,
          chat: { type: "direct" },
          text: "hello from the contract",
        });

        const target = routeOf(message)!;
        const result = await live.adapter.send(target, { text: "and hello back" });
        expect(result.messageIds).toHaveLength(1);
        expect(live.sent()).toEqual([expect.objectContaining({ to: target.to, text: "and hello back" })]);

        await live.adapter.stop();
        started = false;
        await expect.poll(() => live.openConnections(), { timeout }).toBe(0);
        await expect.poll(leakableHandles, { timeout }).toBeLessThanOrEqual(handlesBefore);
      },
      timeout * 3,
    );
  });

  describe(`adapter contract: ${contract.channel} send`, () => {
    let platform: ContractPlatform;
    beforeEach(async () => {
      platform = await contract.platform();
    });
    afterEach(async () => {
      await platform.close();
    });

    it("declares its channel id and a text limit the platform accepts", () => {
      expect(platform.adapter.id).toBe(contract.channel);
      expect(platform.adapter.capabilities.maxTextLength).toBeGreaterThanOrEqual(100);
      expect(platform.adapter.capabilities.maxTextLength).toBeLessThanOrEqual(contract.platformMaxTextLength);
    });

    it("sends a text of exactly the limit as one message and returns its id", async () => {
      const text = `${"x".repeat(platform.adapter.capabilities.maxTextLength - 4)} end`;
      const result = await platform.adapter.send(platform.target, { text });
      expect(result.messageIds).toHaveLength(1);
      expect(result.messageIds[0]).toMatch(/\S/);
      expect(platform.sent()).toEqual([expect.objectContaining({ to: platform.target.to, text })]);
    });

    it("shows text that looks like markup exactly as written", async () => {
      const text = "1 < 2 && 3 > 2, <b>not bold</b> &amp; a_snake_case name";
      await platform.adapter.send(platform.target, { text });
      expect(platform.sent().map((s) => s.text)).toEqual([text]);
    });

    if (contract.threads) {
      it("sends into the thread the target names", async () => {
        const target = platform.threadTarget!;
        await platform.adapter.send(target, { text: "in the thread" });
        expect(platform.sent()).toEqual([
          expect.objectContaining({ to: target.to, threadId: String(target.threadId), text: "in the thread" }),
        ]);
      });
    }

    it.each([
      ["rate_limited", true],
      ["chat_not_found", false],
      ["network", true],
    ] as const)("reports a %s failure as a DeliveryError (retryable: %s)", async (failure, retryable) => {
      platform.failNextSend(failure);
      const error = await platform.adapter.send(platform.target, { text: "hello" }).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(error).toBeInstanceOf(DeliveryError);
      expect(error).toMatchObject({ retryable, ...(failure !== "network" && { reason: failure }) });
      if (failure === "rate_limited") expect((error as DeliveryError).retryAfterMs).toBeGreaterThan(0);
      expect(platform.sent()).toEqual([]);
    });
  });
}
