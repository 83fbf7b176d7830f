const SECRET_KEYS = new Set(["botToken", "token", "webhookSecret", "apiKey", "password", "Authorization", "authorization"]);

/** The placeholder shown instead of a secret. */
export const MASK = "********";

/** A deep copy of `value` with every secret field replaced by {@link MASK}. */
export function maskSecrets<T>(value: T): T {
  if (Array.isArray(value)) return value.map((item) => maskSecrets(item)) as T;
  if (typeof value !== "object" || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    out[key] = SECRET_KEYS.has(key) && typeof item === "string" ? MASK : maskSecrets(item);
  }
  return out as T;
}
