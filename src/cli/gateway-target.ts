import type { Config } from "../config/index.js";
import { type GatewayLockInfo, readGatewayLock } from "../gateway/gateway-lock.js";
import { type CliIo, cliPaths } from "./cli-io.js";
import { defaultGatewayUrl } from "./gateway-client.js";

/** The gateway a command talks to, and what named it. */
export interface GatewayTarget {
  url: string;
  token: string | undefined;
  /** `--url`, the home's gateway.lock (the gateway running on this home), or nothing runs */
  namedBy: "flag" | "lock" | "none";
  home: string;
  holder?: GatewayLockInfo;
}

/**
 * Finds the gateway of this home: `--url` when given, else the port its gateway.lock names (so a
 * gateway started with `--port N` is found), else none runs. The token: flag, env, then config.
 */
export async function findGateway(
  io: CliIo,
  config: Config,
  configFlag: string | undefined,
  flags: { url?: string; token?: string },
): Promise<GatewayTarget> {
  const home = cliPaths(io, configFlag).home;
  const token = flags.token ?? io.env.SWITCHBOARD_GATEWAY_TOKEN ?? config.gateway.auth.token;
  if (flags.url) return { url: flags.url, token, namedBy: "flag", home };
  const holder = await readGatewayLock(home);
  if (!holder) return { url: defaultGatewayUrl(config.gateway.port), token, namedBy: "none", home };
  return { url: lockUrl(holder, config), token, namedBy: "lock", home, holder };
}

/** Where the gateway holding a lock listens, as a local client reaches it. */
export function lockUrl(holder: GatewayLockInfo, config: Config): string {
  // Until it listens the lock holds the port asked for (0 = any): the configured one is the best guess.
  const url = holder.url ?? defaultGatewayUrl(holder.port || config.gateway.port);
  return url.replace("://0.0.0.0:", "://127.0.0.1:");
}

/** Says, for a person, why the gateway of `target` cannot be asked and what to do. */
export function unreachableMessage(target: GatewayTarget, reason?: string): string {
  const because = reason ? `: ${reason}` : "";
  if (target.namedBy === "none")
    return `no gateway runs on ${target.home} (no live gateway.lock there). Start one with \`npm start\` (or \`bin/switchboard gateway run\`), or pass --url.`;
  if (target.namedBy === "lock")
    return `the gateway of ${target.home} (pid ${target.holder!.pid}) does not answer at ${target.url}${because}`;
  return `no gateway answers at ${target.url}${because}`;
}
