import { type CliIo, CliExit, ExitCode, err, loadCliConfig, out } from "./cli-io.js";
import { type GatewayClient, GatewayCallError, connectGateway, defaultGatewayUrl } from "./gateway-client.js";

/** Connects to the gateway named by flags, env or config; prints how to start one when none runs. */
export async function connectCli(
  io: CliIo,
  configFlag: string | undefined,
  flags: { url?: string; token?: string },
): Promise<GatewayClient> {
  const { config } = await loadCliConfig(io, configFlag);
  const url = flags.url ?? defaultGatewayUrl(config.gateway.port);
  const token = flags.token ?? io.env.SWITCHBOARD_GATEWAY_TOKEN ?? config.gateway.auth.token;
  try {
    return await connectGateway(url, token);
  } catch (error) {
    if (error instanceof GatewayCallError) err(io, `the gateway at ${url} refused the connection: ${error.message}`);
    else
      err(
        io,
        `no gateway answers at ${url}. Start one with \`npm start\` (or \`bin/switchboard gateway run\`), or pass --url.`,
      );
    throw new CliExit(ExitCode.failure);
  }
}

/** Prints a result as indented JSON. */
export function printJson(io: CliIo, value: unknown): void {
  out(io, JSON.stringify(value, null, 2));
}
