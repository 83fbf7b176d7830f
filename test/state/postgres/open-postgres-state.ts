// Opens the PostgreSQL state port for the state contract, in the test and in its crash child: the
// run's server (its url in SB_TEST_PG_URL, set by test/support/postgres.ts) and a schema named after
// the contract's folder, so reopening a folder reopens its state and a new folder starts empty.
import { createHash } from "node:crypto";
import path from "node:path";
import { createMemoryLogger } from "../../../src/logger.js";
import { openStateBackend } from "../../../src/state/open-state-backend.js";
import type { StatePort } from "../../../src/state/state-port.js";
import { PG_URL_ENV } from "../../support/postgres-server.js";

/** The schema that holds the state of folder `dir`. */
const schemaOf = (dir: string) => `c_${createHash("sha256").update(dir).digest("hex").slice(0, 20)}`;

/** `url` with its connections named `name` (a connection string's own parameters win over the pool's default name). */
function withAppName(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set("application_name", name);
  return parsed.toString();
}

/** The PostgreSQL port on the state of `dir`, as the gateway opens it; closing it closes its database too. */
export async function openState(dir: string): Promise<StatePort> {
  const url = process.env[PG_URL_ENV];
  if (!url) throw new Error(`${PG_URL_ENV} is not set: start the run's server first (test/support/postgres.ts)`);
  // The crash child names its connections (PGAPPNAME, set by the contract), so the test can wait for them to end.
  const named = process.env.PGAPPNAME ? withAppName(url, process.env.PGAPPNAME) : url;
  const backend = await openStateBackend({
    config: { backend: "postgres", postgres: { url: named, schema: schemaOf(dir), poolSize: 4 } },
    env: {},
    dir: path.join(dir, "state"),
    logger: createMemoryLogger(),
  });
  return backend.state;
}
