import { z } from "zod";
import type { ChannelConfigDefinition } from "../channel-table.js";
import { BUILT_SECTION_DEFAULTS } from "./built-defaults.js";

/** The modules that define the sections (zod builds a module's schemas when it is imported). */
export interface SectionModules {
  general: typeof import("./general.js");
  session: typeof import("./session.js");
  agents: typeof import("./agents.js");
  bindings: typeof import("./bindings.js");
  extras: typeof import("./agent-extras.js");
  automation: typeof import("./automation.js");
  channels: typeof import("../channel-table.js");
  state: typeof import("./state.js");
  cluster: typeof import("./cluster.js");
}

type Table = readonly ChannelConfigDefinition[] | undefined;

/** One section: the module defining it and its schema taken from that module (with its default). */
const section = <M extends keyof SectionModules, S extends z.ZodType>(
  module: M,
  make: (loaded: SectionModules[M], table: Table) => S,
) => ({ module, make });

/**
 * Every section of `switchboard.json5`, in the order a parsed config lists them. `channels.<id>` is
 * composed from the channel table; without one it checks only the fields every channel shares.
 */
const SECTIONS = {
  /** editor hint, ignored */
  $schema: section("general", () => z.string().optional()),
  session: section("session", (m) => m.SessionConfigSchema.prefault({})),
  agents: section("agents", (m) => m.AgentsConfigSchema.prefault({})),
  tools: section("agents", (m) => m.ToolsConfigSchema.prefault({})),
  /** which agent gets which messages (precedence: docs/session-keys.md) */
  bindings: section("bindings", (m) => z.array(m.BindingSchema).default([])),
  channels: section("channels", (m, table) => m.channelsSchema(table).prefault({})),
  commands: section("general", (m) => m.CommandsConfigSchema.prefault({})),
  gateway: section("general", (m) => m.GatewayConfigSchema.prefault({})),
  models: section("general", (m) => m.ModelsConfigSchema.prefault({})),
  logging: section("general", (m) => m.LoggingConfigSchema.prefault({})),
  mcp: section("extras", (m) => m.McpConfigSchema.prefault({})),
  cron: section("automation", (m) => m.CronConfigSchema.prefault({})),
  hooks: section("automation", (m) => m.HooksConfigSchema.prefault({})),
  state: section("state", (m) => m.StateConfigSchema.prefault({})),
  cluster: section("cluster", (m) => m.ClusterConfigSchema.prefault({})),
};

type SectionName = keyof typeof SECTIONS;

/** Each section's schema, as the top-level object holds it. */
export type SectionSchemas = { [K in SectionName]: ReturnType<(typeof SECTIONS)[K]["make"]> };

/** Every section's schema, built from modules already loaded. */
export function sectionSchemas(modules: SectionModules, table: Table): SectionSchemas {
  const entries = Object.entries(SECTIONS).map(([name, { module, make }]) => [
    name,
    (make as (loaded: unknown, table: Table) => z.ZodType)(modules[module], table),
  ]);
  return Object.fromEntries(entries) as SectionSchemas;
}

const LOADERS: { [M in keyof SectionModules]: () => Promise<SectionModules[M]> } = {
  general: () => import("./general.js"),
  session: () => import("./session.js"),
  agents: () => import("./agents.js"),
  bindings: () => import("./bindings.js"),
  extras: () => import("./agent-extras.js"),
  automation: () => import("./automation.js"),
  channels: () => import("../channel-table.js"),
  state: () => import("./state.js"),
  cluster: () => import("./cluster.js"),
};

/** A section the file leaves out: its default, as its schema gives it, without building that schema. */
function absent(defaults: Readonly<Record<string, unknown>>, name: string): z.ZodType {
  if (!(name in defaults)) return z.never().optional();
  return z.never().default(() => structuredClone(defaults[name]) as never);
}

/**
 * The section schemas for `raw`, loading only the modules of the sections it has: the others take the
 * defaults the build recorded (bin/cli-build.mjs). Run from the sources, every section is built.
 * `table` is asked for only when `raw` has `channels`.
 */
export async function sectionSchemasFor(
  raw: Readonly<Record<string, unknown>>,
  table: () => Promise<Table>,
  defaults = BUILT_SECTION_DEFAULTS,
): Promise<SectionSchemas> {
  const needed = (name: string) => !defaults || Object.hasOwn(raw, name);
  const entries = Object.entries(SECTIONS).map(async ([name, { module, make }]) => {
    if (!needed(name)) return [name, absent(defaults!, name)];
    const [loaded, channels] = await Promise.all([LOADERS[module](), name === "channels" ? table() : undefined]);
    return [name, (make as (loaded: unknown, table: Table) => z.ZodType)(loaded, channels)];
  });
  return Object.fromEntries(await Promise.all(entries)) as SectionSchemas;
}
