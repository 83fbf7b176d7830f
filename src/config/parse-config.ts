import type { ChannelConfigDefinition } from "./channel-table.js";
import { type Config, configSchemaFor } from "./schema/index.js";
import { validateConfig } from "./validate-config.js";

/**
 * Validates a raw config object (already parsed from JSON5) with every section's schema. Throws a
 * CONFIG_INVALID {@link ConfigError} whose `details` list every problem as `path: what is wrong`.
 */
export function parseConfig(
  raw: unknown,
  source = "config",
  channels?: readonly ChannelConfigDefinition[],
): { config: Config; warnings: string[] } {
  return validateConfig(configSchemaFor(channels), raw, source);
}
