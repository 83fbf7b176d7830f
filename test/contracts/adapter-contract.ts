// The contract every channel adapter runs: its pure inbound mapping against real payload fixtures,
// and its sends against the adapter's fake platform. Telegram runs it today; Discord and WhatsApp
// call runAdapterContract with their own fixtures, mapping and fake.
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  type ChannelAdapter,
  type DeliveryContext,
  DeliveryError,
  type InboundMessage,
  InboundMessageSchema,
} from "../../src/index.js";

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
  platform: () => Promise<ContractPlatform>;
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
