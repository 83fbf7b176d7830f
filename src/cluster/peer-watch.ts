// The partition share's ear on its peers' deaths: a connection per live peer waits on that peer's
// liveness lock (./liveness.ts `waitForRelease`). PostgreSQL frees the lock the moment the peer's
// connection closes (a SIGKILL closes its socket), so its partitions are taken by a pass at once,
// not at the next one (heartbeatMs later).
import type pg from "pg";
import type { Logger } from "../logger.js";
import { waitForRelease } from "./liveness.js";
import type { LiveMember } from "./partition-share-sql.js";

/** How long one wait lasts before the next pass arms it again (a lock_timeout; long: a wait is idle). */
const WAIT_MS = 3_600_000;

/** What {@link watchPeers} needs. */
export interface PeerWatchDeps {
  /** a new connection to the schema */
  connect: () => pg.Client;
  logger: Logger;
  /** a watched peer's liveness lock was freed: it died (or its liveness connection broke) */
  onDeath: (peer: LiveMember) => void;
}

/** Waits on the liveness locks of the peers it is given; `watch` after each read of the live members. */
export function watchPeers(deps: PeerWatchDeps) {
  const waiting = new Map<string, AbortController>();
  const wait = (peer: LiveMember) => {
    const controller = new AbortController();
    waiting.set(peer.incarnation, controller);
    const done = () => waiting.get(peer.incarnation) === controller && waiting.delete(peer.incarnation);
    waitForRelease(deps.connect, peer.lockKey, WAIT_MS, controller.signal).then(
      (freed) => {
        done();
        if (freed && !controller.signal.aborted) deps.onDeath(peer);
      },
      (err: unknown) => {
        done();
        // Armed again by the next pass (the database away, or the wait stopped).
        if (!controller.signal.aborted) deps.logger.debug({ err, peer: peer.incarnation }, "peer liveness wait failed");
      },
    );
  };
  return {
    /** Waits on every peer of `peers` not waited on yet, and stops waiting on the ones no longer among them. */
    watch(peers: readonly LiveMember[]) {
      const live = new Set(peers.map((peer) => peer.incarnation));
      for (const [incarnation, controller] of waiting)
        if (!live.has(incarnation)) {
          controller.abort();
          waiting.delete(incarnation);
        }
      for (const peer of peers) if (peer.lockKey && !waiting.has(peer.incarnation)) wait(peer);
    },
    stop() {
      for (const controller of waiting.values()) controller.abort();
      waiting.clear();
    },
  };
}
