import { z } from "zod";
import { LOCAL_CLUSTER_NOTE } from "../../cluster/cluster-status.js";
import { defineMethod } from "./method.js";

/**
 * `cluster.status`: the gateways sharing this gateway's PostgreSQL schema (node id, role, address,
 * host, pid, port, alive, last heartbeat, sessions owned as a count, accounts and leases held), read from the database as `switchboard cluster status`
 * reads it; on the local backend, that it is single-gateway.
 */
export const clusterStatus = defineMethod({
  name: "cluster.status",
  params: z.strictObject({}),
  async handle(core) {
    return core.cluster ? core.cluster.status() : { backend: "local", note: LOCAL_CLUSTER_NOTE };
  },
});
