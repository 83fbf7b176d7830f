// Name-based run ids (issue #28: "Run ids derive from the inbound dedupe key"): every gateway that
// stores one key names the same run, so two copies racing through two gateways are one run.
import { createHash } from "node:crypto";

/** An RFC 9562 UUIDv5 (SHA-1, name-based) of `name` in `namespace`. */
export function uuidV5(namespace: string, name: string): string {
  const space = Buffer.from(namespace.replaceAll("-", ""), "hex");
  const bytes = createHash("sha1").update(space).update(name, "utf8").digest().subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x50;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * The UUIDv5 namespaces of stored turns' run ids, by what stores them (fixed random UUIDs that name
 * Switchboard's runs and nothing else: never change one, stored run ids derive from it).
 */
const STORED_RUNS = {
  hook: "6f1c2a8e-5b0d-4a47-9e36-2d7b8c1f0a95",
  cron: "54a3952f-b2c1-43c4-bd3e-831b3cbcf1dc",
  spawn: "e4601bb1-de63-45ce-8564-ccbb08b17f95",
  announce: "292a19bc-74a6-47b5-9083-6c8bd3c1f62b",
  abort: "3a9d03d1-adc4-4d13-97f2-f4d71e7855c7",
  a2a: "b0c5a6f2-1d8e-4c3b-9a47-6e2f8d1c5b90",
  tool: "7d2e9b41-3c6a-4f85-8e1d-5a0b9c4f2e63",
  notice: "728c138a-bcb2-48b6-9c6d-de55f1125cb0",
} as const;

/** The run id of the turn `kind` stores under `dedupeKey` in schema `scope`: the same on every gateway. */
export function storedRunId(kind: keyof typeof STORED_RUNS, scope: string, dedupeKey: string): string {
  return uuidV5(STORED_RUNS[kind], `${scope}\n${dedupeKey}`);
}
