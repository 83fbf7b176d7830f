// A fourth chat platform, in memory: people and rooms, a bot connection per token that receives
// every event, and posts that can be made to fail as real platforms fail. The Pigeon channel
// (pigeon-channel.ts) is built against it the way the real adapters are built against test/fakes.
import type { ContractFailure } from "../../contracts/adapter-contract.js";

/** One message as the platform delivers it to connected bots. */
export interface PigeonEvent {
  id: string;
  /** "user:<id>" for a direct chat with the bot, "room:<id>" for a room */
  chat: string;
  from: { id: string; name?: string; bot?: boolean };
  text: string;
  /** ms */
  at: number;
  /** the bot was @-mentioned */
  mentioned?: boolean;
}

/** A post the platform refused, shaped like an HTTP error. */
export class PigeonError extends Error {
  constructor(
    readonly status: number,
    readonly retryAfterMs?: number,
  ) {
    super(`pigeon: HTTP ${status}`);
  }
}

/** The platform: what bots see and what they posted. */
export interface PigeonPlatform {
  /** A bot connects with its token; every event reaches `onEvent` until `close`. Throws for an unknown token. */
  connect(token: string, onEvent: (event: PigeonEvent) => void): { close(): void };
  /** A bot posts; returns the new message's id. */
  post(token: string, chat: string, text: string): string;
  /** Someone writes in a chat; every connected bot gets it (asynchronously, as over a network). */
  emit(event: Omit<PigeonEvent, "id" | "at">): Promise<void>;
  /** posts the platform accepted, oldest first */
  readonly posts: Array<{ token: string; chat: string; text: string; id: string }>;
  /** makes the next post fail */
  failNextPost(failure: ContractFailure): void;
  /** bots connected right now */
  connections(): number;
}

const FAILURES: Record<ContractFailure, () => Error> = {
  rate_limited: () => new PigeonError(429, 1500),
  chat_not_found: () => new PigeonError(404),
  network: () => Object.assign(new Error("socket hang up"), { code: "ECONNRESET" }),
};

/** A platform whose bots are `tokens` (the bot's token -> its user id). */
export function createPigeonPlatform(tokens: Record<string, string>): PigeonPlatform {
  const listeners = new Set<(event: PigeonEvent) => void>();
  const posts: PigeonPlatform["posts"] = [];
  let failure: ContractFailure | undefined;
  let next = 0;
  return {
    posts,
    connect(token, onEvent) {
      if (!tokens[token]) throw new PigeonError(401);
      listeners.add(onEvent);
      return { close: () => listeners.delete(onEvent) };
    },
    post(token, chat, text) {
      if (!tokens[token]) throw new PigeonError(401);
      const pending = failure;
      failure = undefined;
      if (pending) throw FAILURES[pending]();
      const id = `m${++next}`;
      posts.push({ token, chat, text, id });
      return id;
    },
    async emit(event) {
      const full = { ...event, id: `m${++next}`, at: 1_767_225_600_000 + next };
      await Promise.resolve();
      for (const listener of listeners) listener(full);
    },
    failNextPost(next) {
      failure = next;
    },
    connections: () => listeners.size,
  };
}
