import type { EventFrame } from "./protocol.js";

/** Which events one connection receives: every session's (`all`), or only those of the listed keys. */
export interface EventSelection {
  all: boolean;
  /** canonical session keys */
  sessionKeys: string[];
}

/** A connection starts subscribed to nothing: it asks with `subscribe`. */
export const NO_EVENTS: EventSelection = { all: false, sessionKeys: [] };

/** True when `frame` concerns a session of `selection` (events without a session go to `all` only). */
export function wantsEvent(selection: EventSelection, frame: EventFrame): boolean {
  if (selection.all) return true;
  const payload = frame.payload as { sessionKey?: unknown } | null;
  const key = typeof payload?.sessionKey === "string" ? payload.sessionKey : undefined;
  return key !== undefined && selection.sessionKeys.includes(key);
}
