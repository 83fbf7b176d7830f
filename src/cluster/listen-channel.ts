// A LISTEN connection of its own (not the pool's: a pooled connection is shared and given back),
// kept open until closed: when it breaks it connects and LISTENs again, and tells its listener it
// may have missed notifications meanwhile.
import { createHash } from "node:crypto";
import pg from "pg";
import type { Logger } from "../logger.js";

/**
 * The NOTIFY channel of `kind` in `schema`: channels are database-wide, so it is named by a hash of
 * the schema (`sb_<kind>_<24 hex>`; the migrations' triggers compute the same name in SQL).
 */
export function schemaChannel(kind: "handoff" | "runs" | "events" | "share", schema: string): string {
  return `sb_${kind}_${createHash("sha256").update(`switchboard:${kind}:${schema}`).digest("hex").slice(0, 24)}`;
}

/** What {@link listenChannel} needs. */
export interface ListenDeps {
  /** the pool whose connection settings it uses */
  pool: Pick<pg.Pool, "options">;
  channel: string;
  logger: Logger;
  /** a notification's payload; undefined once it listens (again): anything sent before may have been missed */
  onNotify: (payload: string | undefined) => void;
  /** the warning when it cannot listen (it tries again) */
  warning: string;
  /** the pause before connecting again; default 500 ms */
  retryMs?: number;
}

/** Listens on `deps.channel` once `open` is called, until `close`. */
export function listenChannel(deps: ListenDeps) {
  let closed = false;
  let current: pg.Client | undefined;
  const open = async () => {
    if (closed) return;
    const client = new pg.Client(deps.pool.options);
    client.on("error", () => {}); // a broken connection also ends
    client.on("notification", (message) => deps.onNotify(message.payload ?? ""));
    client.once("end", () => {
      if (closed || current !== client) return;
      current = undefined;
      setTimeout(() => void open(), deps.retryMs ?? 500).unref();
    });
    current = client;
    try {
      await client.connect();
      await client.query(`LISTEN ${deps.channel}`);
      deps.onNotify(undefined);
    } catch (err) {
      // Closed while connecting (its owner stopping): nothing to warn of.
      if (!closed) deps.logger.warn({ err }, deps.warning);
      await client.end().catch(() => {});
    }
  };
  return {
    open,
    async close() {
      closed = true;
      await current?.end().catch(() => {});
    },
  };
}
