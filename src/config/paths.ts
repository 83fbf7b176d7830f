import path from "node:path";

/** Where Switchboard keeps its state and finds its config. */
export interface SwitchboardPaths {
  /** `$SWITCHBOARD_HOME`, default `~/.switchboard` */
  home: string;
  /** `--config`, else `$SWITCHBOARD_CONFIG`, else `<home>/switchboard.json5` */
  configFile: string;
  /** true when `--config` or `$SWITCHBOARD_CONFIG` named the file (then it must exist) */
  explicit: boolean;
}

/** Inputs for {@link resolvePaths}; the CLI passes `process.env` values, tests pass their own. */
export interface PathInputs {
  homeDir: string;
  cwd: string;
  env: Readonly<Record<string, string | undefined>>;
  configFlag?: string | undefined;
}

function expandHome(p: string, homeDir: string): string {
  return p === "~" || p.startsWith("~/") ? path.join(homeDir, p.slice(1)) : p;
}

/** Resolves the state directory and the config file from flags and environment. */
export function resolvePaths({ homeDir, cwd, env, configFlag }: PathInputs): SwitchboardPaths {
  const homeVar = env.SWITCHBOARD_HOME?.trim();
  const home = path.resolve(cwd, expandHome(homeVar || "~/.switchboard", homeDir));
  const configVar = configFlag?.trim() || env.SWITCHBOARD_CONFIG?.trim();
  const configFile = configVar
    ? path.resolve(cwd, expandHome(configVar, homeDir))
    : path.join(home, "switchboard.json5");
  return { home, configFile, explicit: Boolean(configVar) };
}

/** The path of an agent's session store, honouring `session.store` (`{agentId}` substituted, `~` expanded). */
export function resolveStorePath(
  home: string,
  agentId: string,
  storeTemplate: string | undefined,
  homeDir: string,
): string {
  if (!storeTemplate) return path.join(home, "agents", agentId, "sessions", "sessions.json");
  return path.resolve(home, expandHome(storeTemplate.replaceAll("{agentId}", agentId), homeDir));
}
