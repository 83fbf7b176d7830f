// The PostgreSQL url as the config and the CLI see it: its form checked (`config validate`,
// `doctor`) and its password masked wherever it is shown (logs, `config print`, error lines).

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
