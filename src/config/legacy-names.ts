import { formatPath } from "./format-issues.js";

/** What renaming legacy fields found: warnings for renamed ones, errors for conflicting ones. */
export interface LegacyRenameResult {
  value: unknown;
  warnings: string[];
  errors: string[];
}

const LEGACY_CHANNEL_NAMES = ["provider", "surface"] as const;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function renameToChannel(match: Record<string, unknown>, path: PropertyKey[], result: LegacyRenameResult): void {
  for (const legacy of LEGACY_CHANNEL_NAMES) {
    if (!(legacy in match)) continue;
    const where = formatPath([...path, legacy]);
    if (match.channel !== undefined && match.channel !== match[legacy]) {
      result.errors.push(`${where}: conflicts with channel ${JSON.stringify(match.channel)}; keep only "channel"`);
      delete match[legacy];
      continue;
    }
    match.channel = match[legacy];
    delete match[legacy];
    result.warnings.push(`${where}: legacy name, read as "channel"; rename it`);
  }
}

/**
 * Accepts the names older configs used (`provider`, `surface`) where `channel` is meant: in
 * `session.sendPolicy.rules[].match` and `bindings[].match`. Returns a renamed deep copy.
 */
export function renameLegacyNames(raw: unknown): LegacyRenameResult {
  const value = structuredClone(raw);
  const result: LegacyRenameResult = { value, warnings: [], errors: [] };
  if (!isRecord(value)) return result;
  const session = value.session;
  const rules = isRecord(session) && isRecord(session.sendPolicy) ? session.sendPolicy.rules : undefined;
  if (Array.isArray(rules)) {
    rules.forEach((rule, i) => {
      if (isRecord(rule) && isRecord(rule.match)) {
        renameToChannel(rule.match, ["session", "sendPolicy", "rules", i, "match"], result);
      }
    });
  }
  if (Array.isArray(value.bindings)) {
    value.bindings.forEach((binding, i) => {
      if (isRecord(binding) && isRecord(binding.match))
        renameToChannel(binding.match, ["bindings", i, "match"], result);
    });
  }
  return result;
}
