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
