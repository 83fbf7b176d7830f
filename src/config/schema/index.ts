import type { z } from "zod";
import * as channels from "../channel-table.js";
import * as extras from "./agent-extras.js";
import * as agents from "./agents.js";
import * as automation from "./automation.js";
import * as bindings from "./bindings.js";
import * as cluster from "./cluster.js";
import * as general from "./general.js";
import type { ChannelConfigDefinition } from "../channel-table.js";
import { sectionSchemas } from "./sections.js";
import * as session from "./session.js";
import * as state from "./state.js";
import { configSchemaOf } from "./top-level.js";

/**
 * The whole `switchboard.json5` with `channels.<id>` composed from the channel table: one strict
 * schema, every default next to its field. Without a table, `channels` checks only the fields every
 * channel shares (unit tests of the core); the CLI and the gateway always pass the table. Every
 * section is built here; the CLI's `loadConfig` builds those its file has (./sections.ts).
 */
export function configSchemaFor(table?: readonly ChannelConfigDefinition[]) {
  return configSchemaOf(
    sectionSchemas({ general, session, agents, bindings, extras, automation, channels, state, cluster }, table),
  );
}

/** The config schema without a channel table (see {@link configSchemaFor}). */
export const ConfigSchema = configSchemaFor();

/** The resolved configuration, defaults applied. */
export type Config = z.infer<typeof ConfigSchema>;
/** The configuration as written in the file (every field optional). */
export type ConfigInput = z.input<typeof ConfigSchema>;

export * from "./agents.js";
export * from "./bindings.js";
export * from "./session.js";
export * from "./access.js";
export * from "./agent-extras.js";
export * from "./automation.js";
export * from "./state.js";
export * from "./cluster.js";
