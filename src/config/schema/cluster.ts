// `cluster.*`: failure detection of gateways sharing one PostgreSQL schema (docs/scale-out.md).
import { z } from "zod";

/** `cluster.*`: how fast a gateway that stopped answering loses what it holds. */
export const ClusterConfigSchema = z
  .strictObject({
    /** default: 15000; a lease not renewed for this long may be taken by another gateway */
    leaseTtlMs: z
      .number()
      .int()
      .min(1_000) // a shorter lease would expire under an ordinary GC pause
      .default(15_000),
    /** default: 3000; how often a gateway renews all of its leases (one statement) */
    heartbeatMs: z
      .number()
      .int()
      .min(200) // each beat is a database round trip
      .default(3_000),
    /** default: `gateway.bind` when it names one address, else the host name; where peers reach this gateway (its member row's `address`, with the port it listens on) */
    advertiseHost: z
      .string()
      .min(1)
      .regex(/^[^\s/:]+$|^\[?[0-9a-fA-F:.]+\]?$/, "a host name or an IP address, without a port or scheme")
      .optional(),
    /**
     * default: "one"; "one": one gateway (the writer lease's holder) runs every turn, the others are
     * standbys; "many": every gateway owns a share of the partitions and runs their turns (step 7 of
     * docs/scale-out.md, being built). PostgreSQL only.
     */
    owners: z.enum(["one", "many"]).default("one"),
  })
  .superRefine((cluster, ctx) => {
    // Three beats per lease: one late or failed beat must not lose the lease.
    if (cluster.heartbeatMs * 3 <= cluster.leaseTtlMs || cluster.leaseTtlMs < 1_000) return;
    ctx.addIssue({
      code: "custom",
      path: ["heartbeatMs"],
      message: `must be at most a third of cluster.leaseTtlMs (${cluster.leaseTtlMs}): set cluster.heartbeatMs to ${Math.floor(cluster.leaseTtlMs / 3)} or less, or raise cluster.leaseTtlMs`,
    });
  });
/** The resolved `cluster` section. */
export type ClusterConfig = z.infer<typeof ClusterConfigSchema>;
