import { randomUUID } from "node:crypto";
import type { SessionEntry, SessionEntryPatch } from "../sessions/session-entry.js";
import type { CommandScope } from "./command-deps.js";

/** Sets fields of the context's session entry (created when missing, `updatedAt` left alone). */
export async function patchSession(scope: CommandScope, patch: SessionEntryPatch): Promise<SessionEntry | undefined> {
  const at = scope.now();
  return scope.sessions.store.patch(scope.context.sessionKey.key, (current) => ({
    ...(!current && { sessionId: randomUUID(), createdAt: at, updatedAt: at }),
    ...patch,
  }));
}
