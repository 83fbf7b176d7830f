/** A message that starts a new session: the trigger and what follows it. */
export interface TriggerMatch {
  trigger: string;
  /** the rest of the message, original case and line breaks kept */
  remainder: string;
}

/** The triggers that always work (the seed: "exact /new or /reset, plus any extras in resetTriggers"). */
const BUILT_IN_RESET_TRIGGERS = ["/new", "/reset"] as const;

/** The triggers in force: `/new`, `/reset` and every extra one from `session.resetTriggers`. */
export function effectiveResetTriggers(configured: readonly string[] | undefined): string[] {
  const all = [...BUILT_IN_RESET_TRIGGERS, ...(configured ?? [])].map((t) => t.trim()).filter(Boolean);
  return all.filter((t, i) => all.findIndex((other) => other.toLowerCase() === t.toLowerCase()) === i);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * Matches a reset trigger at the start of the whole message (docs/sessions.md): exactly the
 * trigger, or the trigger followed by whitespace or `:` and the rest. Case-insensitive;
 * `/newx` is not `/new`, nor is `/new@SomeBot` (adapters turn `/new@ThisBot` into `/new`). No
 * prefix stripping: `Note: /new please` is plain text.
 */
export function matchResetTrigger(text: string, triggers: readonly string[]): TriggerMatch | null {
  const trimmed = text.trim();
  for (const trigger of triggers) {
    const name = trigger.trim();
    if (!name) continue;
    const match = new RegExp(`^${escapeRegExp(name)}(?=$|[\\s:])`, "i").exec(trimmed);
    if (!match) continue;
    const remainder = trimmed.slice(match[0].length).replace(/^:/, "").trimStart();
    return { trigger: name, remainder };
  }
  return null;
}
