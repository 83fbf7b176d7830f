// Several real gateway processes on one PostgreSQL schema (test/fakes/platform-gateway-process.ts,
// each with a home of its own and the same config): the first owns the schema, the others listen
// as standbys and wait for the writer lease. A test finds the owner in the cluster tables, stops one
// with SIGKILL / SIGSTOP / SIGCONT, and reads the rows the cluster stored. Every process is
// SIGKILLed after each test of the calling file.
import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import type pg from "pg";
import { afterAll, afterEach } from "vitest";
import { compiledScript } from "./compiled-script.js";
import { eachLine, until } from "./gateway-child.js";
import { type PostgresTestContext, freshSchema, testPool } from "./postgres.js";
import { tempHome } from "./test-gateway.js";

/** One gateway process of a cluster. */
export interface ClusterGateway {
  /** its node id (`gw-1`, `gw-2`, ...) */
  readonly name: string;
  readonly process: ChildProcess;
  /** the port it listens on (as standby, then as owner) */
  readonly port: number;
  /** "owner" once its gateway started (it printed its "owner" line), before that "standby" */
  role(): "owner" | "standby";
  stderr(): string;
  /** every line it printed on stdout so far (a child's own reports, e.g. test/fakes/whatsapp-child.ts) */
  lines(): readonly string[];
  /** Settles once the gateway's `core.idle()` did (test/fakes/answer-idle.ts); an owner only. */
  idle(): Promise<void>;
  /** settles when the process has exited: its exit code, or the signal that ended it */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** What every gateway of a cluster runs with. */
export interface ClusterOptions {
  size: number;
  /** `owners`: "many" for gateways that each run a share of the partitions (default "one") */
  cluster: { leaseTtlMs: number; heartbeatMs: number; owners?: "one" | "many" };
  /** env of platform-gateway-process.ts besides SB_HOME, SB_STATE and SB_CONFIG (SB_API_ROOT, SB_PLAY, ...) */
  env: Record<string, string>;
  /** env of one gateway only, by its node id (`gw-1` is the first owner), over `env` */
  envOf?: Record<string, Record<string, string>>;
  /** config besides `state`, `cluster` and `gateway.nodeId` (agents, hooks, ...) */
  config?: Record<string, unknown>;
}

/** A running cluster on a schema of its own. */
export interface Cluster {
  readonly schema: string;
  readonly gateways: ClusterGateway[];
  /** The gateway that holds the writer lease and serves as owner (waits until one does). */
  owner(options?: { not?: ClusterGateway; timeoutMs?: number }): Promise<ClusterGateway>;
  /** The node id of the live holder of lease `name` (e.g. `account:discord:default`), if any. */
  leaseHolder(name: string): Promise<string | undefined>;
  /** One statement on the cluster's database, with the schema as search path. */
  query<R extends pg.QueryResultRow>(sql: string, params?: unknown[]): Promise<R[]>;
  /** The rows of state table `table` (`inbox`, `outbox`, `cron-runs`, ...) as stored now, in write order. */
  rows(table: string): Promise<Array<{ key: string; value: Record<string, unknown> }>>;
  /** SIGKILL (no handler runs, nothing flushed); settles once it exited. */
  kill(gateway: ClusterGateway): Promise<void>;
  pause(gateway: ClusterGateway): void;
  resume(gateway: ClusterGateway): void;
  /** Starts one more gateway (`gw-<n>`, with every gateway's options); resolves once it listens. */
  add(): Promise<ClusterGateway>;
}

const SCRIPT = path.resolve(import.meta.dirname, "../fakes/platform-gateway-process.ts");

/** Starts one gateway process; resolves once it listens (as owner, or as standby when `asStandby`). */
async function startOne(name: string, env: Record<string, string>, asStandby: boolean): Promise<ClusterGateway> {
  const child = spawn(process.execPath, [await compiledScript(SCRIPT)], {
    env: { ...process.env, ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  child.stdin!.on("error", () => undefined); // a killed child's pipe
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  let role: "owner" | "standby" = "standby";
  let port = 0;
  const idleWaiters: Array<() => void> = [];
  const lines: string[] = [];
  eachLine(child.stdout!, (line) => {
    lines.push(line);
    if (line === "idle") idleWaiters.shift()?.();
    const url = /^url (\S+)/.exec(line)?.[1];
    if (url) port = Number(new URL(url).port);
    if (line === "owner") role = "owner";
  });
  const listening = until(() => port > 0 && (asStandby || role === "owner"), 60_000);
  await Promise.race([
    listening,
    exited.then(({ code, signal }) => {
      throw new Error(`gateway ${name} exited before it listened (${code ?? signal}): ${stderr.slice(-2000)}`);
    }),
  ]);
  return {
    name,
    process: child,
    port,
    role: () => role,
    stderr: () => stderr,
    lines: () => lines,
    idle: () =>
      new Promise<void>((resolve) => {
        idleWaiters.push(resolve);
        child.stdin!.write("idle\n");
      }),
    exited,
  };
}

/** Returns `start(options)`: a cluster of `options.size` gateways on a fresh schema of `db`'s server. */
export function useCluster(db: PostgresTestContext): (options: ClusterOptions) => Promise<Cluster> {
  const children: ChildProcess[] = [];
  let pool: pg.Pool | undefined;
  afterEach(() => {
    for (const child of children.splice(0)) child.kill("SIGKILL");
  });
  afterAll(() => pool?.end());
  return async (options) => {
    const schema = freshSchema("cl");
    pool ??= testPool({ connectionString: db.url, max: 2 });
    const query = async <R extends pg.QueryResultRow>(sql: string, params: unknown[] = []) => {
      const client = await pool!.connect();
      try {
        await client.query(`SET search_path TO ${schema}`);
        return (await client.query<R>(sql, params)).rows;
      } finally {
        client.release();
      }
    };
    const state = { backend: "postgres", postgres: { url: db.url, schema, poolSize: 4 } };
    const envOf = async (i: number) => ({
      ...options.env,
      ...options.envOf?.[`gw-${i}`],
      SB_HOME: await tempHome(),
      SB_STATE: JSON.stringify(state),
      SB_CONFIG: JSON.stringify({
        ...options.config,
        cluster: options.cluster,
        gateway: { ...(options.config?.gateway as object | undefined), nodeId: `gw-${i}` },
      }),
    });
    const launch = async (i: number, asStandby: boolean) => {
      const env = await envOf(i);
      const started = startOne(`gw-${i}`, env, asStandby);
      return started;
    };
    // The first owns the schema before the others start, so which one owns it first is known.
    const gateways = [await track(launch(1, false))];
    gateways.push(
      ...(await Promise.all(Array.from({ length: options.size - 1 }, (_, i) => track(launch(i + 2, true))))),
    );
    const add = async () => {
      const added = await track(launch(gateways.length + 1, true));
      gateways.push(added);
      return added;
    };
    return { ...clusterOf(schema, gateways, query), add };
  };

  async function track(started: Promise<ClusterGateway>): Promise<ClusterGateway> {
    const gateway = await started;
    children.push(gateway.process);
    return gateway;
  }
}

/** The cluster's view over its gateways and its tables. */
function clusterOf(schema: string, gateways: ClusterGateway[], query: Cluster["query"]): Omit<Cluster, "add"> {
  /** The pid of the live holder of the writer lease, if any. */
  const holderPid = async () =>
    (
      await query<{ pid: number }>(
        `SELECT m.pid FROM cluster_leases l JOIN cluster_members m ON m.incarnation = l.owner
          WHERE l.name = 'schema:writer' AND l.expires_at > now() AND cluster_node_alive(l.owner)`,
      )
    )[0]?.pid;
  return {
    schema,
    gateways,
    async owner({ not, timeoutMs = 30_000 } = {}) {
      let found: ClusterGateway | undefined;
      await until(async () => {
        const pid = await holderPid();
        found = gateways.find((g) => g.process.pid === pid && g !== not && g.role() === "owner");
        return found !== undefined;
      }, timeoutMs).catch(async () => {
        throw new Error(`no owner in ${timeoutMs} ms; ${await whoIsWho(query, gateways)}`);
      });
      return found!;
    },
    async leaseHolder(name) {
      const rows = await query<{ node_id: string }>(
        `SELECT m.node_id FROM cluster_leases l JOIN cluster_members m ON m.incarnation = l.owner
          WHERE l.name = $1 AND l.expires_at > now() AND cluster_node_alive(l.owner)`,
        [name],
      );
      return rows[0]?.node_id;
    },
    query,
    async rows(table) {
      return query<{ key: string; value: Record<string, unknown> }>(
        "SELECT key, value FROM state_rows WHERE tbl = $1 ORDER BY ord",
        [table],
      );
    },
    async kill(gateway) {
      gateway.process.kill("SIGKILL");
      await gateway.exited;
    },
    pause: (gateway) => void gateway.process.kill("SIGSTOP"),
    resume: (gateway) => void gateway.process.kill("SIGCONT"),
  };
}

/** What the cluster tables and each gateway's log say, for a failure message. */
async function whoIsWho(query: Cluster["query"], gateways: ClusterGateway[]): Promise<string> {
  const leases = await query("SELECT name, owner, fence, expires_at > now() AS live FROM cluster_leases");
  const members = await query("SELECT node_id, pid, cluster_node_alive(incarnation) AS alive FROM cluster_members");
  const logs = gateways.map((g) => `${g.name} (pid ${g.process.pid}, ${g.role()}): ${g.stderr().slice(-1500)}`);
  return [JSON.stringify({ leases, members }), ...logs].join("\n");
}
