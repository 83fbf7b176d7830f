import type http from "node:http";
import type { Duplex } from "node:stream";
/** What a standby gateway serves until it owns the schema: by default 503 naming the owner; the relay forwards to it. */
export interface StandbyFront {
  /** answers an HTTP request the standby does not serve itself (everything but /healthz and /readyz) */
  handleHttp(req: http.IncomingMessage, res: http.ServerResponse): Promise<void>;
  /** takes a WebSocket upgrade (after the standby's own edge checks) */
  handleUpgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer): void;
  /** the standby became the owner (or stops): close every relayed connection (WebSocket close 1012) */
  close(): Promise<void>;
}
