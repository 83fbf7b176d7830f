import { maskDatabaseUrl } from "./schema/state.js";

const SECRET_KEYS = new Set(["botToken", "token", "webhookSecret", "apiKey", "password"]);
/** Maps whose every value may be a secret: an MCP server's `env` (tokens) and `headers` (Authorization). */
const SECRET_MAPS = new Set(["env", "headers"]);

/** The placeholder shown instead of a secret. */
export const MASK = "********";

/** A deep copy of `value` with every secret field replaced by {@link MASK}. */
export function maskSecrets<T>(value: T): T {
  if (Array.isArray(value)) return value.map((item) => maskSecrets(item)) as T;
  if (typeof value !== "object" || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    if (SECRET_MAPS.has(key) && typeof item === "object" && item !== null && !Array.isArray(item)) {
      out[key] = Object.fromEntries(Object.keys(item).map((name) => [name, MASK]));
    } else {
      out[key] = SECRET_KEYS.has(key) && typeof item === "string" ? MASK : maskSecrets(item);
      // A url may carry a password (state.postgres.url): only that part is masked.
      if (key === "url" && typeof item === "string") out[key] = maskDatabaseUrl(item);
    }
  }
  return out as T;
}
