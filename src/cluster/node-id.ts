import { randomBytes } from "node:crypto";
import os from "node:os";

let generated: string | undefined;

/** This process's node id when `gateway.nodeId` is unset: `<host>-<random>`, made once and kept for the life of the process. */
export function processNodeId(): string {
  const host =
    os
      .hostname()
      .replace(/[^A-Za-z0-9._-]/g, "-")
      .replace(/^[^A-Za-z0-9]+/, "")
      .slice(0, 40) || "gw";
  generated ??= `${host}-${randomBytes(4).toString("hex")}`;
  return generated;
}

/** A name for this process under `nodeId` (`<nodeId>~<random>`, "~" never being in a node id): the owner of its leases, so a later process reusing the node id never passes its fence checks. */
export function newIncarnation(nodeId: string): string {
  return `${nodeId}~${randomBytes(4).toString("hex")}`;
}
