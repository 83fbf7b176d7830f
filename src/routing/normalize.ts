/** The agent used when nothing else names one. */
export const DEFAULT_AGENT_ID = "main";
/** The last part of the main session key unless `session.mainKey` says otherwise. */
export const DEFAULT_MAIN_KEY = "main";
/** The account of a channel that has no `accounts` section. */
export const DEFAULT_ACCOUNT_ID = "default";

const VALID_ID = /^[a-z0-9][a-z0-9_-]{0,63}$/i;

function sanitizeId(raw: string | null | undefined, fallback: string): string {
  const trimmed = (raw ?? "").trim();
  if (!trimmed) return fallback;
  if (VALID_ID.test(trimmed)) return trimmed.toLowerCase();
  const cleaned = trimmed
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 64);
  return cleaned || fallback;
}

/** `My Agent!` -> `my-agent`; empty -> `main`. */
export function normalizeAgentId(raw: string | null | undefined): string {
  return sanitizeId(raw, DEFAULT_AGENT_ID);
}

/** Account ids inside keys and in binding matches: same rules as agent ids, empty -> `default`. */
export function normalizeAccountId(raw: string | null | undefined): string {
  return sanitizeId(raw, DEFAULT_ACCOUNT_ID);
}

/** Trimmed and lowercased; empty -> `main`. */
export function normalizeMainKey(raw: string | null | undefined): string {
  return (raw ?? "").trim().toLowerCase() || DEFAULT_MAIN_KEY;
}

/** Trimmed and lowercased; empty -> `unknown`. */
export function normalizeChannel(raw: string | null | undefined): string {
  return (raw ?? "").trim().toLowerCase() || "unknown";
}
