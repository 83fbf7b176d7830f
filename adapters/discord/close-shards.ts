// Closing the bot's gateway connection for good at a stop, with a code that keeps its session.
// @discordjs/ws reconnects a shard on its own after a close it can recover from: the shard sits
// Idle for 500 ms, then connects again (Connecting until HELLO, then Resuming, then Ready). A
// destroy() in that window returns at once ("Tried to destroy a shard that was idle"), and the shard
// comes back 500 ms later from a stopping process: a connection left next to the next holder, or
// closed with 1000 (which ends the session) by Client.destroy(). So each shard is closed once it is
// open again, and one still Idle after the window is down.
import { setTimeout as sleep } from "node:timers/promises";

/** A shard as @discordjs/ws keeps it (`WebSocketShard`; not in discord.js's typings). */
interface Shard {
  readonly status: unknown;
  destroy(options: { code: number; reason: string }): Promise<void>;
}

/** @discordjs/ws's manager; its default strategy (SimpleShardingStrategy) holds the shards. */
export interface ShardManager {
  destroy(options: { code: number; reason: string }): Promise<void>;
  strategy?: { shards?: { values(): Iterable<Shard> } };
}

/** `WebSocketShardStatus` of @discordjs/ws. */
const IDLE = 0;
const OPEN = new Set([2, 3]); // Resuming, Ready: the socket is open, a destroy closes it with its code
/** The reconnect waits 500 ms: a shard Idle for longer is down, not reconnecting. */
const RECONNECT_WINDOW_MS = 1_000;
/** A reconnect that keeps failing (the network is gone) is left after this, with a warning. */
const CLOSE_BOUND_MS = 5_000;
const POLL_MS = 20;

/**
 * Closes every shard of `manager` with `close`, waiting (within 5 s) for one in its own reconnect
 * to be open first; then the manager forgets them, so a later `Client.destroy()` (1000) reaches
 * none. False when a shard was still reconnecting at the bound.
 */
export async function closeShards(manager: ShardManager, close: { code: number; reason: string }): Promise<boolean> {
  const shards = [...(manager.strategy?.shards?.values() ?? [])];
  const deadline = Date.now() + CLOSE_BOUND_MS;
  const closed = await Promise.all(shards.map((shard) => closeShard(shard, close, deadline)));
  await manager.destroy(close);
  return closed.every(Boolean);
}

/** Closes `shard` once its socket is open (Connecting has none open yet: a destroy would leave it to open unclosed). */
async function closeShard(shard: Shard, close: { code: number; reason: string }, deadline: number): Promise<boolean> {
  // Internals moved (another @discordjs/ws): the manager's destroy alone, as before.
  if (typeof shard.status !== "number") return true;
  let idleSince = Date.now();
  for (;;) {
    if (OPEN.has(shard.status)) {
      await shard.destroy(close);
      return true;
    }
    if (shard.status !== IDLE) idleSince = Date.now();
    else if (Date.now() - idleSince >= RECONNECT_WINDOW_MS) return true;
    if (Date.now() >= deadline) return false;
    await sleep(POLL_MS);
  }
}
