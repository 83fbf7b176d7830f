// The PostgreSQL url as the config and the CLI see it: its form checked (`config validate`,
// `doctor`) and its password masked wherever it is shown (logs, `config print`, error lines).
// Free of zod, so the CLI reads it without building a schema.

/** The url with its password replaced by `***` (the user stays: it helps to see who connects). */
export function maskDatabaseUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) {
      parsed.password = "***";
      return parsed.toString();
    }
    if (parsed.host) return url; // a url with no password in it
  } catch {
    // not a url at all: masked by its form below, since it may still hold a secret
  }
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)?([^:/@\s]*):[^@]*@/i, "$1$2:***@");
}

/** What is wrong with the url's form (a sentence naming the fix), or undefined when it looks usable. */
export function databaseUrlProblem(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'is not a url: use "postgres://user:password@host:5432/database"';
  }
  if (parsed.protocol !== "postgres:" && parsed.protocol !== "postgresql:")
    return `starts with "${parsed.protocol}": use "postgres://user:password@host:5432/database"`;
  if (!parsed.hostname && !parsed.searchParams.get("host"))
    return 'names no host: use "postgres://user:password@host:5432/database"';
  if (parsed.pathname.length <= 1)
    return 'names no database: add it after the host, e.g. "postgres://user@host:5432/switchboard"';
  return undefined;
}

/** A schema name the gateway accepts: a plain lower-case SQL identifier, so it needs no quoting anywhere. */
export const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** The env var that supplies the PostgreSQL url when the config has none. */
const DATABASE_URL_ENV = "SWITCHBOARD_DATABASE_URL";

/**
 * The database a "postgres" gateway uses: the config's url, else SWITCHBOARD_DATABASE_URL; or the
 * problem (a sentence naming the path and the fix) when there is none or its form is wrong.
 */
export function databaseTarget(
  state: { postgres: { url?: string | undefined; schema: string; poolSize: number } },
  env: Record<string, string | undefined>,
): { url: string; schema: string; poolSize: number } | { problem: string } {
  const url = state.postgres.url ?? env[DATABASE_URL_ENV]?.trim();
  if (!url)
    return {
      problem: `state.postgres.url: required when state.backend is "postgres": set it, or ${DATABASE_URL_ENV}, to "postgres://user:password@host:5432/database"`,
    };
  const problem = databaseUrlProblem(url);
  if (problem) return { problem: `${state.postgres.url ? "state.postgres.url" : DATABASE_URL_ENV}: ${problem}` };
  return { url, schema: state.postgres.schema, poolSize: state.postgres.poolSize };
}
