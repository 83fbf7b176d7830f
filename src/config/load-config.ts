import { readFile } from "node:fs/promises";
import { ConfigError, ErrorCodes } from "../errors.js";
import type { ChannelConfigDefinition } from "./channel-table.js";
import type { Config } from "./schema/index.js";
import { sectionSchemasFor } from "./schema/sections.js";
import { configSchemaOf } from "./schema/top-level.js";
import { validateConfig } from "./validate-config.js";

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

/** The channel table, or how to load it (asked for only when the config has a `channels` section). */
type ChannelTable =
  | readonly ChannelConfigDefinition[]
  | (() => Promise<readonly ChannelConfigDefinition[] | undefined>);

/** The file's text, or undefined when there is no file. */
async function readConfigText(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new ConfigError(ErrorCodes.CONFIG_UNREADABLE, `cannot read ${file}: ${(err as Error).message}`, {
      cause: err,
    });
  }
}

/** The file's JSON5 as an object; throws CONFIG_INVALID naming the line for anything else. */
async function parseConfigText(file: string, text: string): Promise<Record<string, unknown>> {
  if (text.trim() === "") return {};
  let raw: unknown;
  try {
    raw = (await import("json5")).default.parse(text); // loaded here: a home without a config never needs it
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
  return raw as Record<string, unknown>;
}

/**
 * Reads and validates the JSON5 config at `file`, its `channels.<id>` by the channel table; a
 * missing file means all defaults. Only the sections the file has get their schema built (the
 * others take their defaults, see schema/sections.ts).
 */
export async function loadConfig(file: string, channels?: ChannelTable): Promise<LoadedConfig> {
  const text = await readConfigText(file);
  const raw = text === undefined ? {} : await parseConfigText(file, text);
  const table = typeof channels === "function" ? channels : async () => channels;
  const schema = configSchemaOf(await sectionSchemasFor(raw, table));
  return { ...validateConfig(schema, raw, file), path: file, exists: text !== undefined };
}
