import { type CliIo, CliExit, ExitCode, err, loadCliConfig, out } from "./cli-io.js";
import { type GatewayClient, GatewayCallError, connectGateway } from "./gateway-client.js";
import { type GatewayTarget, findGateway, unreachableMessage } from "./gateway-target.js";

/** Connects to the gateway named by flags or the home's gateway.lock; prints how to start one when none runs. */
export async function connectCli(
  io: CliIo,
  configFlag: string | undefined,
  flags: { url?: string; token?: string },
): Promise<GatewayClient> {
  return (await reachGateway(io, configFlag, flags)).client;
}

/** {@link connectCli}, with the gateway it reached (the terminal chat dials it again after a restart). */
export async function reachGateway(
  io: CliIo,
  configFlag: string | undefined,
  flags: { url?: string; token?: string },
): Promise<{ client: GatewayClient; target: GatewayTarget }> {
  const { config } = await loadCliConfig(io, configFlag);
  const target = await findGateway(io, config, configFlag, flags);
  if (target.namedBy === "none") {
    err(io, unreachableMessage(target));
    throw new CliExit(ExitCode.failure);
  }
  try {
    return { client: await connectGateway(target.url, target.token), target };
  } catch (error) {
    if (error instanceof GatewayCallError)
      err(io, `the gateway at ${target.url} refused the connection: ${error.message}`);
    else if (target.namedBy === "lock") err(io, unreachableMessage(target, (error as Error).message));
    else
      err(
        io,
        `${unreachableMessage(target)}. Start one with \`npm start\` (or \`bin/switchboard gateway run\`), or pass --url.`,
      );
    throw new CliExit(ExitCode.failure);
  }
}

/** Prints a result as indented JSON. */
export function printJson(io: CliIo, value: unknown): void {
  out(io, JSON.stringify(value, null, 2));
}
