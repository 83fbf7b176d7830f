// A gateway's liveness: a session-level advisory lock held on a connection of its own. PostgreSQL
// frees it the moment that connection closes (a SIGKILL closes the socket), so peers waiting on it
// learn of the death within milliseconds instead of waiting for the lease TTL.
import { createHash } from "node:crypto";
import type pg from "pg";
import { SwitchboardError } from "../errors.js";
import type { Logger } from "../logger.js";

/** The advisory lock key of `nodeId` in `schema` (a signed 64-bit number, as text). */
export function livenessKey(schema: string, nodeId: string): string {
  return createHash("sha256").update(`switchboard:node:${schema}:${nodeId}`).digest().readBigInt64BE().toString();
}

/** The liveness connection; the heartbeat runs on it too, so a busy pool never delays a beat. */
export interface Liveness {
  /** the connection, while it holds the lock (undefined while reconnecting) */
  client(): pg.Client | undefined;
  close(): Promise<void>;
}

/** Options of {@link holdLiveness}. */
export interface LivenessOptions {
  /** a new connection to the schema (search_path set) */
  connect: () => pg.Client;
  key: string;
  nodeId: string;
  logger: Logger;
  /** the pause before reconnecting after the connection broke; default 500 ms */
  retryMs?: number;
  /** on reconnecting, the lock is held by another connection: a later process under this node id took over */
  onTakenOver: () => void;
}

/** Connects and takes the lock; false when another live connection holds it (throws when the server cannot be reached). */
async function lockOn(client: pg.Client, key: string): Promise<boolean> {
  client.on("error", () => {}); // a broken connection also ends; "end" handles it
  await client.connect();
  const { rows } = await client.query<{ ok: boolean }>("SELECT pg_try_advisory_lock($1::bigint) AS ok", [key]);
  return rows[0]!.ok;
}

/**
 * Takes the node's liveness lock on a dedicated connection; rejects naming the node when another
 * live gateway uses the same node id. When the connection breaks (the server restarted) it
 * reconnects and takes the lock again; meanwhile peers may see the node as dead, which is safe:
 * they can take its leases, and the fences then refuse its writes. When another connection holds
 * the lock by then, a later process took the node id over: it stops trying and calls `onTakenOver`.
 */
export async function holdLiveness(options: LivenessOptions): Promise<Liveness> {
  const { key, logger } = options;
  let closed = false;
  let current: pg.Client | undefined;
  const watch = (client: pg.Client) =>
    client.once("end", () => {
      if (closed || current !== client) return;
      current = undefined;
      logger.warn({ nodeId: options.nodeId }, "the cluster liveness connection broke; reconnecting");
      setTimeout(reconnect, options.retryMs ?? 500).unref();
    });
  const reconnect = async () => {
    if (closed) return;
    const client = options.connect();
    const ok = await lockOn(client, key).catch(() => undefined);
    if (ok && !closed) {
      current = client;
      watch(client);
      return logger.info({ nodeId: options.nodeId }, "the cluster liveness lock is held again");
    }
    await client.end().catch(() => {});
    if (closed) return;
    if (ok === false) return options.onTakenOver();
    setTimeout(reconnect, options.retryMs ?? 500).unref();
  };
  const first = options.connect();
  if (!(await lockOn(first, key).catch((err) => first.end().then(() => Promise.reject(err))))) {
    await first.end().catch(() => {});
    throw new SwitchboardError(
      "BUSY",
      `node id "${options.nodeId}" is in use by another live gateway on this schema: give each gateway its own gateway.nodeId (or leave it unset to generate one)`,
    );
  }
  current = first;
  watch(first);
  return {
    client: () => current,
    async close() {
      closed = true;
      await current?.end().catch(() => {});
    },
  };
}

/**
 * Waits until the liveness lock `key` is free (its holder's connection closed) or `timeoutMs`
 * passed, on a connection of its own; true when it was freed. The instant shared lock is let go at once.
 */
export async function waitForRelease(
  connect: () => pg.Client,
  key: string,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<boolean> {
  const client = connect();
  client.on("error", () => {});
  // A stop while waiting ends the connection: the wait's statement fails at once.
  const abort = () => void client.end().catch(() => {});
  signal?.addEventListener("abort", abort, { once: true });
  try {
    signal?.throwIfAborted();
    await client.connect();
    await client.query(`SET lock_timeout = ${Math.max(1, Math.round(timeoutMs))}`);
    await client.query("SELECT pg_advisory_lock_shared($1::bigint)", [key]);
    await client.query("SELECT pg_advisory_unlock_shared($1::bigint)", [key]);
    return true;
  } catch (err) {
    signal?.throwIfAborted();
    if ((err as { code?: string }).code === "55P03") return false; // lock_timeout: still held
    throw err;
  } finally {
    signal?.removeEventListener("abort", abort);
    void client.end().catch(() => {}); // not awaited: the caller takes the lease at once
  }
}
