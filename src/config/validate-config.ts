import type { z } from "zod";
import { ConfigError, ErrorCodes } from "../errors.js";
import { formatConfigIssues } from "./format-issues.js";
import { renameLegacyNames } from "./legacy-names.js";
import type { Config } from "./schema/index.js";

/**
 * Validates a raw config object (already parsed from JSON5) with `schema`. Throws a CONFIG_INVALID
 * {@link ConfigError} whose `details` list every problem as `path: what is wrong`.
 */
export function validateConfig(
  schema: z.ZodType<Config>,
  raw: unknown,
  source: string,
): { config: Config; warnings: string[] } {
  const renamed = renameLegacyNames(raw ?? {});
  // jitless: the config is parsed once per process, so compiling zod's fast path for it only costs time
  const parsed = schema.safeParse(renamed.value, { reportInput: true, jitless: true });
  const problems = [...renamed.errors, ...(parsed.success ? [] : formatConfigIssues(schema, parsed.error.issues))];
  if (!parsed.success || problems.length > 0) {
    throw new ConfigError(
      ErrorCodes.CONFIG_INVALID,
      `${source} is invalid (${problems.length} problem${problems.length === 1 ? "" : "s"}):`,
      { details: problems },
    );
  }
  return { config: parsed.data, warnings: renamed.warnings };
}
