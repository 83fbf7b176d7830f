import type { z } from "zod";
import { schemaKeysAt } from "./schema-keys.js";
import { closestMatch } from "./suggest.js";

/** `a.b[0].c` for a zod issue path; `(root)` for the top. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const segment of path) {
    if (typeof segment === "number") out += `[${segment}]`;
    else out += out ? `.${String(segment)}` : String(segment);
  }
  return out || "(root)";
}

function describe(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case "invalid_value": {
      const allowed = issue.values.map((v) => JSON.stringify(v));
      const hint = typeof issue.input === "string" ? closestMatch(issue.input, issue.values.map(String)) : undefined;
      return `must be one of ${allowed.join(", ")}${hint ? ` (did you mean "${hint}"?)` : ""}`;
    }
    case "invalid_type":
      return issue.input === undefined
        ? `is required (expected ${issue.expected})`
        : `expected ${issue.expected}, got ${typeName(issue.input)}`;
    case "too_big":
    case "too_small": {
      const bound = issue.code === "too_big" ? issue.maximum : issue.minimum;
      const word = issue.code === "too_big" ? "at most" : "at least";
      const exact = issue.inclusive === false ? (issue.code === "too_big" ? "less than" : "more than") : word;
      const unit = issue.origin === "string" ? " characters" : issue.origin === "array" ? " items" : "";
      return issue.origin === "string" && issue.code === "too_small" && bound === 1
        ? "must not be empty"
        : `must be ${exact} ${String(bound)}${unit}`;
    }
    case "invalid_key":
      return `invalid key: ${issue.issues.map((inner) => inner.message).join("; ")}`;
    default:
      return issue.message.replace(/^Invalid input: /, "");
  }
}

function typeName(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}

/** Every problem as one line `path: what is wrong (did you mean X?)`, in the order zod found them. */
export function formatConfigIssues(schema: z.core.$ZodType, issues: readonly z.core.$ZodIssue[]): string[] {
  const lines: string[] = [];
  for (const issue of issues) {
    if (issue.code === "unrecognized_keys") {
      const known = schemaKeysAt(schema, issue.path);
      for (const key of issue.keys) {
        const hint = closestMatch(key, known);
        lines.push(
          `${formatPath([...issue.path, key])}: unknown key` +
            (hint ? ` (did you mean ${hint}?)` : known.length ? ` (allowed: ${known.join(", ")})` : ""),
        );
      }
    } else {
      lines.push(`${formatPath(issue.path)}: ${describe(issue)}`);
    }
  }
  return lines;
}
