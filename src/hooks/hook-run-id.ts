// Run ids derived from the inbound dedupe key (issue #28: "Run ids derive from the inbound dedupe
// key"): every gateway that receives one idempotency key names the same run, so two copies racing
// through two gateways can never be answered with two different runs.
import { createHash } from "node:crypto";

/** The UUIDv5 namespace of hook runs (a fixed random UUID: names Switchboard's hook runs, nothing else). */
const HOOK_RUNS = "6f1c2a8e-5b0d-4a47-9e36-2d7b8c1f0a95";

/** An RFC 9562 UUIDv5 (SHA-1, name-based) of `name` in `namespace`. */
export function uuidV5(namespace: string, name: string): string {
  const space = Buffer.from(namespace.replaceAll("-", ""), "hex");
  const bytes = createHash("sha1").update(space).update(name, "utf8").digest().subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x50;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The run id of a hook stored under `dedupeKey` (`hook:<idempotencyKey>`) in schema `scope`: the same on every gateway. */
export function hookRunId(scope: string, dedupeKey: string): string {
  return uuidV5(HOOK_RUNS, `${scope}\n${dedupeKey}`);
}
