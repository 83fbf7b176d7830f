/** A message that starts a new session: the trigger and what follows it. */
export interface TriggerMatch {
  trigger: string;
  /** the rest of the message, original case and line breaks kept */
  remainder: string;
}

/** The triggers in force: `session.resetTriggers` when non-empty, else `/new` and `/reset`. */
export function effectiveResetTriggers(configured: readonly string[] | undefined): string[] {
  return configured && configured.length > 0 ? [...configured] : ["/new", "/reset"];
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * Matches a reset trigger at the start of the whole message (spec sessions.md §3.4): exactly the
 * trigger, or the trigger followed by whitespace or `:` and the rest. Case-insensitive;
 * `/newx` is not `/new`. `/new@Bot` counts only when `botUsername` is that bot. No prefix
 * stripping: `Note: /new please` is plain text.
 */
export function matchResetTrigger(text: string, triggers: readonly string[], options: { botUsername?: string } = {}): TriggerMatch | null {
  const trimmed = text.trim();
  for (const trigger of triggers) {
    const name = trigger.trim();
    if (!name) continue;
    const match = new RegExp(`^${escape(name)}(?:@([A-Za-z0-9_]+))?(?=$|[\\s:])`, "i").exec(trimmed);
    if (!match) continue;
    const addressedTo = match[1];
    if (addressedTo && addressedTo.toLowerCase() !== options.botUsername?.toLowerCase()) return null;
    const remainder = trimmed.slice(match[0].length).replace(/^:/, "").trimStart();
    return { trigger: name, remainder };
  }
  return null;
}
