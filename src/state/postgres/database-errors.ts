// What a PostgreSQL failure means for the gateway: a connection problem (wait, retry, report
// `degraded`) or anything else (a bug or a refused statement: fail the write), and the one line a
// person reads when the gateway cannot start on its database.
import { maskDatabaseUrl } from "../../config/schema/state.js";

const CONNECTION_ERRNOS = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EAI_AGAIN",
]);
// SQLSTATE classes and codes of a server that is away, shutting down or starting up.
const CONNECTION_SQLSTATES = new Set(["57P01", "57P02", "57P03", "53300"]);

/** The SQLSTATE or errno of a pg error, if it has one. */
function codeOf(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | undefined)?.code;
  return typeof code === "string" ? code : undefined;
}

/**
 * True when `err` says the database could not be reached or the connection broke (the server is
 * down, restarting, or the network is cut): trying again later can succeed.
 */
export function isConnectionError(err: unknown): boolean {
  const code = codeOf(err);
  if (code && (CONNECTION_ERRNOS.has(code) || CONNECTION_SQLSTATES.has(code) || code.startsWith("08"))) return true;
  const message = err instanceof Error ? err.message : "";
  return /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error/i.test(
    message,
  );
}

/** A short reason for logs and `/healthz`: "connection refused (127.0.0.1:5432)". */
export function connectionReason(err: unknown): string {
  const code = codeOf(err);
  const message = err instanceof Error ? err.message : String(err);
  if (code === "ECONNREFUSED") return `connection refused (${message.replace(/^connect ECONNREFUSED /, "")})`;
  if (code === "57P01") return "the server is shutting down";
  if (code === "57P03") return "the server is starting up";
  return message;
}

/** The database's name and user in a url, for the messages below. */
function partsOf(url: string): { user: string; database: string } {
  try {
    const parsed = new URL(url);
    return {
      user: decodeURIComponent(parsed.username) || "(default)",
      database: decodeURIComponent(parsed.pathname.slice(1)),
    };
  } catch {
    return { user: "(unknown)", database: "(unknown)" };
  }
}

const WHERE = "state.postgres.url (or SWITCHBOARD_DATABASE_URL)";

/**
 * The one line that says why the gateway cannot use its database at start, naming the url (its
 * password masked) and the fix.
 */
export function startFailureLine(url: string, err: unknown): string {
  const shown = maskDatabaseUrl(url);
  const { user, database } = partsOf(url);
  const code = codeOf(err);
  if (code === "28P01" || code === "28000")
    return `PostgreSQL at ${shown} refused user "${user}" (wrong password or no access): fix the user and password in ${WHERE}`;
  if (code === "3D000")
    return `PostgreSQL at ${shown} has no database "${database}": create it (createdb ${database}) or name an existing one in ${WHERE}`;
  if (code === "42501")
    return `PostgreSQL at ${shown}: user "${user}" may not create the schema or its tables: grant it CREATE on database "${database}", or create the schema for it`;
  if (code === "ENOTFOUND" || code === "EAI_AGAIN")
    return `PostgreSQL at ${shown}: the host name does not resolve: fix the host in ${WHERE}`;
  if (isConnectionError(err))
    return `PostgreSQL at ${shown} cannot be reached (${connectionReason(err)}): start the server, or fix the host and port in ${WHERE}`;
  return `PostgreSQL at ${shown} cannot be used: ${err instanceof Error ? err.message : String(err)}`;
}
