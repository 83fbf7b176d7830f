// A delivery gate on a manual clock, a fake channel adapter and an outbox in memory (or on disk):
// what the gate's tests and the send guard's outage tests build.
import { mkdtemp } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { type SessionConfig, SessionConfigSchema } from "../../src/config/schema/session.js";
import { type DeliveryGateDeps, createDeliveryGate } from "../../src/delivery/delivery-gate.js";
import type { DeliveryRequest } from "../../src/delivery/delivery-request.js";
import { createOutbox } from "../../src/delivery/outbox.js";
import { createMemoryLogger } from "../../src/logger.js";
import { parseSessionKey } from "../../src/routing/parse-session-key.js";
import type { StatePort } from "../../src/state/state-port.js";
import { type FakeChannelAdapter, createFakeChannelAdapter } from "../fakes/fake-channel-adapter.js";
import { type ManualClock, createManualClock } from "../fakes/manual-clock.js";
import { onLocalState } from "./local-state.js";
import { onMemoryState } from "./memory-state.js";

/** What a test may set of the gate it builds; everything else has a default. */
export interface GateSetup {
  /** the outbox on disk (a test that reads the file, or restarts on it); else in memory */
  disk?: boolean;
  file?: string;
  clock?: ManualClock;
  adapter?: FakeChannelAdapter;
  policy?: unknown;
  retry?: { attempts?: number; minDelayMs?: number; maxDelayMs?: number; maxAgeMs?: number };
  retryFor?: DeliveryGateDeps["retryFor"];
  mayStillSend?: DeliveryGateDeps["mayStillSend"];
  holdsLane?: DeliveryGateDeps["holdsLane"];
  laneEmptied?: DeliveryGateDeps["laneEmptied"];
  /** the outbox on this port (a memory port holding some partitions); else as `disk` says */
  state?: StatePort;
}

/** A started gate (no jitter: delays are exactly the backoff), with what a test looks at. */
export async function setupGate(options: GateSetup = {}) {
  const file = options.file ?? path.join(await mkdtemp(path.join(os.tmpdir(), "sb-gate-")), "state", "outbox.json");
  const clock = options.clock ?? createManualClock();
  const logger = createMemoryLogger();
  const adapter = options.adapter ?? createFakeChannelAdapter({ id: "telegram", maxTextLength: 4000 });
  const policy: SessionConfig["sendPolicy"] = SessionConfigSchema.shape.sendPolicy.parse(options.policy ?? {});
  const deps = { path: file, logger, now: clock.now };
  const onDisk = options.disk === true || options.file !== undefined;
  const outbox = await createOutbox(
    options.state ? { ...deps, state: options.state } : onDisk ? onLocalState(deps) : onMemoryState(deps, file),
  );
  const gate = createDeliveryGate({
    adapters: (channel) => (channel === adapter.id ? adapter : undefined),
    outbox,
    policy: () => policy,
    logger,
    now: clock.now,
    timers: clock.timers,
    random: () => 1, // no jitter: delays are exactly the backoff
    ...(options.retry && { retry: options.retry }),
    ...(options.retryFor && { retryFor: options.retryFor }),
    ...(options.mayStillSend && { mayStillSend: options.mayStillSend }),
    ...(options.holdsLane && { holdsLane: options.holdsLane }),
    ...(options.laneEmptied && { laneEmptied: options.laneEmptied }),
  });
  gate.start();
  return { file, clock, logger, adapter, outbox, gate };
}

/** A reply to the Telegram DM 42 (`reply:1`); `fields` replace any part. */
export const request = (fields: Partial<DeliveryRequest> = {}): DeliveryRequest => ({
  sessionKey: parseSessionKey("agent:main:telegram:dm:42")!,
  target: { channel: "telegram", to: "42" },
  text: "hello",
  kind: "reply",
  idempotencyKey: "reply:1",
  ...fields,
});
