// Session events across gateways (rule 8 of step 7): every event of this gateway's hub that names a
// session is published with NOTIFY on the schema's events channel, tagged with this node; every
// other gateway's events heard on that channel are emitted again on this hub, so a client subscribed
// here sees them like its own gateway's. Events are not durable (the transcript is): a publish that
// fails is logged and dropped, and a receiver that was not listening misses what was sent meanwhile.
import { randomBytes } from "node:crypto";
import type pg from "pg";
import type { Logger } from "../logger.js";
import { createReassembly, encodeBatch, readPart, type WireEvent } from "./event-wire.js";
import { listenChannel, schemaChannel } from "./listen-channel.js";

/** The NOTIFY channel of the session events of `schema`. */
export const eventsChannel = (schema: string): string => schemaChannel("events", schema);

/** What {@link bridgeEvents} needs. */
/** An event as the gateway's hub fans it out (its `seq` is the hub's own). */
interface HubEvent {
  event: string;
  payload: unknown;
}

/** What the bridge needs of the gateway's event hub (src/gateway/event-hub.ts): emit, and listen to every event. */
interface BridgedHub {
  emit(event: string, payload: unknown): void;
  subscribe(listener: (frame: HubEvent) => void): () => void;
}

export interface EventBridgeOptions {
  pool: pg.Pool;
  schema: string;
  /** this gateway's node id: events tagged with it are its own and never emitted again */
  nodeId: string;
  hub: BridgedHub;
  logger: Logger;
  /** events waiting while a publish is slow; beyond it the oldest are dropped; default 10,000 */
  maxQueued?: number;
  /** the pause before listening again after the connection broke; default 500 ms */
  retryMs?: number;
  /**
   * Whether this gateway's leases are young now (no round trip): an event emitted while they are
   * not (a paused gateway, continued, before its heartbeat stops it), or still waiting to be
   * published when they stop being so, is dropped. Default: always.
   */
  mayPublish?: () => boolean;
}

/** A running bridge. */
export interface EventBridge {
  /** settles once this gateway listens: other gateways' events sent from then on are emitted here */
  listening: Promise<void>;
  /** stops taking events, publishes those already taken, stops listening */
  stop(): Promise<void>;
}

/** The JSON characters at most in one batch (one statement: its parts are NOTIFYs of under 8,000 bytes). */
const MAX_BATCH_CHARS = 256 * 1024;

/** The payload's session key, when the event concerns a session. */
function sessionKeyOf(payload: unknown): string | undefined {
  const key = (payload as { sessionKey?: unknown } | null)?.sessionKey;
  return typeof key === "string" ? key : undefined;
}

/**
 * The events waiting to be published, as JSON: `take` adds one (beyond `maxQueued` the oldest is
 * dropped, with one warning until the queue empties again), `batch` takes the oldest ones as one
 * JSON array of at most {@link MAX_BATCH_CHARS} (one event at least).
 */
function createEventQueue(options: EventBridgeOptions) {
  const maxQueued = options.maxQueued ?? 10_000;
  const queue: string[] = [];
  let overflowing = false;
  return {
    take(wire: string): void {
      queue.push(wire);
      if (queue.length <= maxQueued) return;
      queue.shift();
      if (!overflowing)
        options.logger.warn({ maxQueued }, "session events queue full (publishing is slow); oldest dropped");
      overflowing = true;
    },
    batch(): string | undefined {
      if (queue.length === 0) {
        overflowing = false;
        return undefined;
      }
      let bytes = 2 + queue[0]!.length;
      let count = 1;
      while (count < queue.length && bytes + queue[count]!.length + 1 <= MAX_BATCH_CHARS)
        bytes += queue[count++]!.length + 1;
      return `[${queue.splice(0, count).join(",")}]`;
    },
  };
}

/**
 * Publishes the hub's session events in order from one chain of NOTIFY statements (one at a time,
 * so they commit in the order emitted): each carries every event emitted since the previous one
 * started. Returns `take` (a hub listener) and `flushed`.
 */
function createPublisher(options: EventBridgeOptions) {
  const channel = eventsChannel(options.schema);
  const instance = randomBytes(4).toString("hex");
  const queue = createEventQueue(options);
  let batches = 0;
  let running: Promise<void> | undefined;
  const pump = async (): Promise<void> => {
    for (let body = queue.batch(); body !== undefined; body = queue.batch()) {
      // Taken while young, but the leases aged since (a pause between the take and this publish): dropped.
      if (options.mayPublish && !options.mayPublish()) continue;
      const parts = encodeBatch(options.nodeId, `${instance}.${++batches}`, body);
      try {
        // All parts in one statement, so one transaction: they reach every listener together or not at all.
        await options.pool.query("SELECT pg_notify($1, part) FROM unnest($2::text[]) AS part", [channel, parts]);
      } catch (err) {
        // Events are not durable: a failed publish is dropped, and the turn goes on.
        options.logger.warn({ err, bytes: body.length }, "session events not published to other gateways; dropped");
      }
    }
    running = undefined;
  };
  const take = (frame: HubEvent): void => {
    if (sessionKeyOf(frame.payload) === undefined) return;
    try {
      queue.take(JSON.stringify([frame.event, frame.payload] satisfies WireEvent));
    } catch (err) {
      options.logger.warn({ err, event: frame.event }, "session event not serializable; not published");
      return;
    }
    // Started after the current task: the events a turn emits together (queued and running, ok and
    // final) go in one NOTIFY; while one is in flight, the next waits and carries all emitted meanwhile.
    running ??= new Promise((resolve) => setImmediate(resolve)).then(pump);
  };
  /** settles once the events taken are published, or after `ms` (a database that hangs is not waited out) */
  const flushed = async (ms: number): Promise<void> => {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([running, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
    clearTimeout(timer);
  };
  return { take, flushed };
}

/**
 * Emits on the hub the events of other nodes heard on the channel: `onNotify` is the LISTEN
 * connection's listener, `emitting()` is true while such an event is emitted (it is not published
 * again), `listening` settles at the first LISTEN.
 */
function createReceiver(options: EventBridgeOptions) {
  const { hub, logger, nodeId } = options;
  const batches = createReassembly();
  let again = false;
  let heard: () => void = () => {};
  const listening = new Promise<void>((resolve) => (heard = resolve));
  const emitForeign = (events: WireEvent[]) => {
    again = true;
    try {
      for (const [event, payload] of events) hub.emit(event, payload);
    } finally {
      again = false;
    }
  };
  const onNotify = (payload: string | undefined) => {
    if (payload === undefined) {
      batches.clear(); // (re)listening: parts heard before belong to batches whose rest was missed
      heard();
      return;
    }
    try {
      const part = readPart(payload);
      if (!part || part.origin === nodeId) return;
      const events = batches.add(part);
      if (events) emitForeign(events);
    } catch (err) {
      logger.warn({ err }, "session events from another gateway unreadable; skipped");
    }
  };
  return { onNotify, listening, emitting: () => again };
}

/** Starts bridging `options.hub` to the other gateways of `options.schema`. */
export function bridgeEvents(options: EventBridgeOptions): EventBridge {
  const publisher = createPublisher(options);
  const receiver = createReceiver(options);
  const channel = listenChannel({
    pool: options.pool,
    channel: eventsChannel(options.schema),
    logger: options.logger,
    onNotify: receiver.onNotify,
    warning: "not listening to other gateways' session events; trying again",
    ...(options.retryMs !== undefined && { retryMs: options.retryMs }),
  });
  const mayPublish = options.mayPublish ?? (() => true);
  const unsubscribe = options.hub.subscribe((frame) => {
    if (!receiver.emitting() && mayPublish()) publisher.take(frame);
  });
  void channel.open();
  return {
    listening: receiver.listening,
    async stop() {
      unsubscribe();
      await publisher.flushed(2_000);
      await channel.close();
    },
  };
}
