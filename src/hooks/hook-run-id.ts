// Run ids derived from the inbound dedupe key (issue #28: "Run ids derive from the inbound dedupe
// key"): every gateway that receives one idempotency key names the same run, so two copies racing
// through two gateways can never be answered with two different runs.
import { uuidV5 } from "../agents/uuid-v5.js";

/** The UUIDv5 namespace of hook runs (a fixed random UUID: names Switchboard's hook runs, nothing else). */
const HOOK_RUNS = "6f1c2a8e-5b0d-4a47-9e36-2d7b8c1f0a95";

/** The run id of a hook stored under `dedupeKey` (`hook:<idempotencyKey>`) in schema `scope`: the same on every gateway. */
export function hookRunId(scope: string, dedupeKey: string): string {
  return uuidV5(HOOK_RUNS, `${scope}\n${dedupeKey}`);
}
