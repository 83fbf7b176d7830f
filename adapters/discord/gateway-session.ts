// The account's Discord gateway session, kept in the channel state so the next holder of the
// account (a restart, or a peer gateway taking the lease over after this one died) can RESUME it:
// Discord replays to a RESUME (session id + last sequence) every event after that sequence, which
// a new IDENTIFY never gets. docs/scale-out.md "Channel accounts".
import { type Client, GatewayDispatchEvents } from "discord.js";
import { z } from "zod";
import type { ChannelRows, Logger } from "../../src/index.js";
import { type ShardManager, closeShards } from "./close-shards.js";
import { type FreezeBound, type FreezeLog, SESSION_LIMITS, sessionFreeze } from "./store-in-order.js";

/** The row's key in the account's channel state. */
const KEY = "gatewaySession";

/** A close code that keeps the session resumable (what @discordjs/ws closes with to resume). */
export const KEEP_SESSION = 4200;

/** Loopback hosts, the only ones a RESUME may reach without TLS (the fake Discord of the tests). */
const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

/** A RESUME carries the bot token: only to `wss:`, or `ws:` on a loopback host. */
function safeResumeUrl(value: string): boolean {
  if (!URL.canParse(value)) return false;
  const url = new URL(value);
  return url.protocol === "wss:" || (url.protocol === "ws:" && LOOPBACK.has(url.hostname));
}

const StoredSessionSchema = z.object({
  sessionId: z.string().min(1),
  /** `resume_gateway_url` of the session's READY: a RESUME must go there */
  resumeUrl: z.url().refine(safeResumeUrl, "not a wss: URL (nor ws: on a loopback host)"),
  /** the sequence of the last event this account is done with (stored, or ignored) */
  seq: z.number().int().nonnegative(),
});

/** A gateway session as stored. */
export type StoredSession = z.infer<typeof StoredSessionSchema>;

/** Records the account's session as events are handled; one write in flight at a time, the latest value next. */
export interface SessionKeeper {
  /** The session a previous holder left (undefined when none, or the row is unreadable). */
  stored(): StoredSession | undefined;
  /** A new session is READY at `seq` (after the replayed events are stored). */
  started(sessionId: string, resumeUrl: string, seq: number): void;
  /** The events up to `seq` of the current session are handled. */
  handled(seq: number): void;
  /**
   * A message was not stored (its tries all failed, or the core refused it while stopping): the
   * row stays before it (no later sequence, no new session), so the next holder's RESUME gives it
   * back and the inbox drops what follows it as duplicates; for at most `freeze` (./store-in-order.ts),
   * then it is logged as lost and the row moves on.
   */
  lost(messageId?: string): void;
  /** Settles once the latest value is written (a clean stop leaves the session for the next holder). */
  flushed(): Promise<void>;
}

/**
 * The keeper of `rows`. Writes are coalesced, so the stored sequence may lag a few events behind:
 * a RESUME then replays events already stored, which the inbox drops as duplicates (by message id).
 */
export function sessionKeeper(
  rows: ChannelRows,
  log: FreezeLog,
  options: { freeze?: FreezeBound; now?: () => number } = {},
): SessionKeeper {
  const freeze = sessionFreeze(options.freeze ?? SESSION_LIMITS.freeze, log, options.now ?? Date.now);
  /** the session and sequence handled so far (written unless frozen) */
  let current: StoredSession | undefined;
  let pending: StoredSession | undefined;
  let flushing: Promise<void> | undefined;
  const flush = async () => {
    while (pending !== undefined) {
      const value = pending;
      pending = undefined;
      await rows.write({ [KEY]: value }).catch((err: unknown) =>
        // Not fatal: the next holder resumes from an older sequence (duplicates are dropped) or identifies.
        log.logger.warn({ accountId: log.accountId, err }, "discord gateway session not stored"),
      );
    }
    flushing = undefined;
  };
  const save = (value: StoredSession) => {
    current = value;
    if (!freeze.thawed()) return;
    pending = value;
    flushing ??= flush();
  };
  return {
    stored() {
      const value = rows.get(KEY);
      if (value === undefined || value === null) return undefined;
      const parsed = StoredSessionSchema.safeParse(value);
      if (parsed.success) return parsed.data;
      log.logger.warn(
        { accountId: log.accountId, row: `discord/${log.accountId}/${KEY}`, err: z.prettifyError(parsed.error) },
        "discord gateway session row unreadable, ignored: the account identifies, and messages sent while no gateway was connected are not replayed (the row is overwritten by the new session)",
      );
      return undefined;
    },
    started(sessionId, resumeUrl, seq) {
      save({ sessionId, resumeUrl, seq });
    },
    handled(seq) {
      if (!current || seq <= current.seq) return;
      freeze.handled();
      save({ ...current, seq });
    },
    lost: freeze.lost,
    flushed: async () => {
      await flushing;
    },
  };
}

/** Work run one at a time in order; held (kept, not run) until `release`, which runs `first` ahead of it. */
export interface HeldQueue {
  push(work: () => Promise<void>): void;
  release(first: Array<() => Promise<void>>): void;
  /** settles once everything queued so far has run */
  drained(): Promise<void>;
}

/** The account's queue: live events wait in it while the previous holder's session is replayed. */
export function heldQueue(onError: (err: unknown) => void): HeldQueue {
  let held: Array<() => Promise<void>> | undefined = [];
  let tail = Promise.resolve();
  const run = (work: () => Promise<void>) => {
    tail = tail.then(work).catch(onError);
  };
  return {
    push: (work) => (held ? held.push(work) : run(work)),
    release(first) {
      const waiting = held ?? [];
      held = undefined;
      for (const work of [...first, ...waiting]) run(work);
    },
    drained: () => tail,
  };
}

/**
 * Hands every live MESSAGE_CREATE to `store` in order, with its sequence (./store-in-order.ts: the
 * row moves past it once stored), and READY records the new session (queued, so after the replayed
 * messages are stored).
 */
export function followSession(
  client: Client,
  keeper: SessionKeeper,
  inOrder: (work: () => Promise<void>) => void,
  store: (data: unknown, seq: number) => Promise<void>,
): void {
  // "raw" carries each dispatch with its sequence number (discord.js's typings do not list it).
  client.on("raw", (packet: { t?: string; s?: number; d?: { session_id?: string; resume_gateway_url?: string } }) => {
    const seq = packet.s ?? 0;
    if (packet.t === "READY" && packet.d?.session_id && packet.d.resume_gateway_url) {
      const { session_id, resume_gateway_url } = packet.d;
      inOrder(async () => keeper.started(session_id, resume_gateway_url, seq));
    } else if (packet.t === GatewayDispatchEvents.MessageCreate) inOrder(() => store(packet.d, seq));
  });
}

/** The @discordjs/ws manager discord.js's Client keeps (not in its typings). */
interface ShardManagerHolder {
  ws: { _ws?: ShardManager | null };
}

/**
 * Closes the gateway connection with 4200, the close @discordjs/ws itself uses to resume
 * (`destroy({ code })`): Discord ends a session only on 1000/1001, and `Client.destroy()` closes
 * with 1000. "missing" when the manager is not there (a discord.js that moved it): nothing was
 * closed; "reconnecting" when a shard's own reconnect did not open within the bound (./close-shards.ts).
 */
async function closeKeepingSession(client: Client): Promise<"closed" | "reconnecting" | "missing"> {
  const manager = (client as unknown as ShardManagerHolder).ws._ws;
  if (typeof manager?.destroy !== "function") return "missing";
  const closed = await closeShards(manager, {
    code: KEEP_SESSION,
    reason: "Switchboard stopping; the next holder resumes",
  });
  return closed ? "closed" : "reconnecting";
}

/**
 * A clean stop that leaves the session to the next holder (a rolling restart): closed so that
 * Discord keeps it, every message it got handled, then the row written at the last one stored, so
 * the next holder RESUMEs after it and gets what was sent in between.
 */
export async function stopKeepingSession(
  client: Client,
  account: { drained: () => Promise<void>; keeper: SessionKeeper },
  log: { logger: Logger; accountId: string },
): Promise<void> {
  const closed = await closeKeepingSession(client);
  if (closed === "missing")
    log.logger.warn(
      { accountId: log.accountId },
      "discord session ended by the stop: messages sent until the next start are not replayed",
    );
  else if (closed === "reconnecting")
    log.logger.warn(
      { accountId: log.accountId },
      "discord gateway still reconnecting at the stop: it may connect once more until the process exits",
    );
  await account.drained();
  await account.keeper.flushed();
  await client.destroy();
}
