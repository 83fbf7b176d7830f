import { type KeyContext, parseSessionKey } from "../routing/parse-session-key.js";
import type { ParsedSessionKey } from "../routing/session-key.js";
import { notASessionKey } from "../routing/session-key-refs.js";

/** Parsed keys remembered at most (well past the sessions a store holds in practice). */
const MAX_PARSED_KEYS = 200_000;

/** A store's parsed keys, remembered so listing and writing do not parse the same key again. */
export function createSessionKeyCache(keys: KeyContext) {
  const parsedKeys = new Map<string, ParsedSessionKey | null>();
  return {
    /** `key` parsed, or null when it is not a session key. */
    parsedKey(key: string): ParsedSessionKey | null {
      let parsed = parsedKeys.get(key);
      if (parsed === undefined) {
        parsed = parseSessionKey(key, keys);
        parsedKeys.set(key, parsed);
      }
      return parsed;
    },
    /** `key` parsed; every write parses its key, so a key already canonical is remembered (a bounded number of them). */
    canonical(key: string): ParsedSessionKey {
      const known = parsedKeys.get(key);
      if (known) return known;
      const parsed = parseSessionKey(key, keys);
      if (!parsed) throw notASessionKey(key);
      if (parsed.key === key) {
        if (parsedKeys.size >= MAX_PARSED_KEYS) parsedKeys.clear();
        parsedKeys.set(key, parsed);
      }
      return parsed;
    },
  };
}

/** The parsed-key cache of one store. */
export type SessionKeyCache = ReturnType<typeof createSessionKeyCache>;
