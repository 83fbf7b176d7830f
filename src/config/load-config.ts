import { readFile } from "node:fs/promises";
import JSON5 from "json5";
import { ConfigError, ErrorCodes } from "../errors.js";
import { formatConfigIssues } from "./format-issues.js";
import { renameLegacyNames } from "./legacy-names.js";
import type { ChannelConfigDefinition } from "./channel-table.js";
import { type Config, configSchemaFor } from "./schema/index.js";

/** A validated configuration and where it came from. */
export interface LoadedConfig {
  config: Config;
  /** the file that was read (or would have been, when it does not exist) */
  path: string;
  /** false when the file is missing and every default applies */
  exists: boolean;
  /** legacy names that were accepted, one line each */
  warnings: string[];
}

/**
 * Validates a raw config object (already parsed from JSON5). Throws a CONFIG_INVALID
 * {@link ConfigError} whose `details` list every problem as `path: what is wrong`.
 */
export function parseConfig(
  raw: unknown,
  source = "config",
  channels?: readonly ChannelConfigDefinition[],
): { config: Config; warnings: string[] } {
  const renamed = renameLegacyNames(raw ?? {});
  const schema = configSchemaFor(channels);
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

/**
 * Reads and validates the JSON5 config at `file`, its `channels.<id>` by the channel table; a
 * missing file means all defaults.
 */
export async function loadConfig(file: string, channels?: readonly ChannelConfigDefinition[]): Promise<LoadedConfig> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") {
      return { ...parseConfig({}, file, channels), path: file, exists: false };
    }
    throw new ConfigError(ErrorCodes.CONFIG_UNREADABLE, `cannot read ${file}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  let raw: unknown;
  try {
    raw = text.trim() === "" ? {} : JSON5.parse(text);
  } catch (err) {
    const { lineNumber, columnNumber, message } = err as SyntaxError & { lineNumber?: number; columnNumber?: number };
    const where = lineNumber ? `${file}:${lineNumber}:${columnNumber ?? 1}` : file;
    throw new ConfigError(
      ErrorCodes.CONFIG_INVALID,
      `${where}: not valid JSON5: ${message.replace(/^JSON5: /, "").replace(/ at \d+:\d+$/, "")}`,
      { cause: err },
    );
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw new ConfigError(ErrorCodes.CONFIG_INVALID, `${file}: the config must be an object ({ ... })`);
  }
  return { ...parseConfig(raw, file, channels), path: file, exists: true };
}
