// The seam between a standby gateway (./standby-server.ts) and what it serves until it owns its
// schema (docs/scale-out.md): by default a 503 naming the owner; the owner relay plugs in here.
import type http from "node:http";
import type { Duplex } from "node:stream";
import type { Logger } from "../logger.js";
import { sendRefusal, writeRefusal } from "./edge-refusal.js";
import type { RequestPolicy } from "./request-guard.js";
import type { ResponseFrame } from "./protocol.js";
import type { TokenGuard } from "./token-guard.js";

/** The gateway that owns the schema, as its member row says. */
export interface OwnerAddress {
  nodeId: string;
  /** "host:port" where peers reach it */
  address: string;
}

/** The cluster's lease timing, as a relay in flight needs it. */
export interface RelayTiming {
  /** a relay without response headers this long re-reads the owner (a paused owner's lease is taken by then) */
  leaseTtlMs: number;
  /** while relaying, the owner is read again at least this often */
  heartbeatMs: number;
}

/** A standby's answers to the reads it serves itself (./standby-reads.ts); `answer` resolves undefined for a frame to relay. */
export interface StandbyReads {
  /** True when `method` may be answered here (the frame is then given to `answer`). */
  serves(method: string): boolean;
  /** The answer to a request frame, or undefined: relay it to the owner (a run this gateway cannot read). */
  answer(frame: unknown, client: string): Promise<ResponseFrame | undefined>;
  /** Stops the run results' LISTEN connection and answers every wait (as timed out). */
  close(): Promise<void>;
}

/** Several parts a standby answers itself as one (its reads, its `chat.send`): each frame goes to the first that serves its method. */
export function servedTogether(...parts: StandbyReads[]): StandbyReads {
  return {
    serves: (method) => parts.some((part) => part.serves(method)),
    answer: async (frame, client) => {
      const method = (frame as { method?: unknown } | null)?.method;
      const part = parts.find((p) => typeof method === "string" && p.serves(method));
      return part?.answer(frame, client);
    },
    close: async () => {
      await Promise.all(parts.map((part) => part.close()));
    },
  };
}

/** What a standby gives its front. */
export interface StandbyContext {
  /** the owner as last read from the database; undefined while none is known (or this gateway holds the lease) */
  owner(): OwnerAddress | undefined;
  /** reads the owner again (a relay to the last one failed: it may have changed); a failed read keeps the last one */
  refreshOwner(): Promise<OwnerAddress | undefined>;
  /** the schema's relay secret, sent as `x-switchboard-relay` (src/cluster/relay-secret.ts) */
  relaySecret(): Promise<string>;
  /** `cluster.leaseTtlMs` and `cluster.heartbeatMs`: how long a relay waits for an owner that may be paused */
  timing: RelayTiming;
  /** the gateway's Host/Origin policy and token guard (per-client lockout), for the checks the front applies itself */
  edge: { policy: RequestPolicy; guard: TokenGuard };
  /** the reads this standby answers itself from PostgreSQL (./standby-reads.ts); absent: all relayed */
  reads?: StandbyReads | undefined;
  logger: Logger;
}

/** What a standby gateway serves until it owns the schema: by default 503 naming the owner; the relay forwards to it. */
export interface StandbyFront {
  /** answers an HTTP request the standby does not serve itself (everything but /healthz and /readyz) */
  handleHttp(req: http.IncomingMessage, res: http.ServerResponse): Promise<void>;
  /** takes a WebSocket upgrade (after the standby's own edge checks) */
  handleUpgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer): void;
  /** the standby became the owner (or stops): close every relayed connection (WebSocket close 1012) */
  close(): Promise<void>;
}

/** Makes the front of a standby (start-gateway's `standbyFront` option; default {@link createStandbyFront}). */
export type StandbyFrontFactory = (context: StandbyContext) => StandbyFront;

/** The refusal a standby gives what it does not relay: which gateway to ask instead, and to retry soon. */
function standbyMessage(context: StandbyContext): string {
  const owner = context.owner();
  return owner
    ? `this gateway is a standby; the owner is ${owner.nodeId} at ${owner.address}`
    : "this gateway is a standby; no owner is known yet";
}

/** The default front: every request and upgrade gets 503 UNAVAILABLE naming the owner, with Retry-After: 1. */
export function createStandbyFront(context: StandbyContext): StandbyFront {
  const retry = { "retry-after": "1" };
  return {
    async handleHttp(_req, res) {
      sendRefusal(res, "UNAVAILABLE", standbyMessage(context), retry);
    },
    handleUpgrade(_req, socket) {
      writeRefusal(socket, "UNAVAILABLE", standbyMessage(context), retry);
    },
    async close() {},
  };
}
