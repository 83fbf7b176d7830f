// Real gateways for the control UI tests: the offline model, an ephemeral loopback port, and a
// restart on the same home and port (what a person sees when the gateway goes away and comes back).
import type { LanguageModel } from "ai";
import { afterAll, beforeAll } from "vitest";
import { createOfflineModel } from "../../src/agents/models/index.js";
import { connectGateway, type GatewayClient } from "../../src/cli/gateway-client.js";
import { parseConfig } from "../../src/config/index.js";
import type { ChannelAdapter } from "../../src/delivery/channel-adapter.js";
import { type RunningGateway, startGateway } from "../../src/gateway/start-gateway.js";
import { createMemoryLogger } from "../../src/logger.js";
import { tempHome } from "../support/test-gateway.js";

/** A gateway the tests can stop and start again; `pageUrl` stays the same across restarts. */
export interface UiGateway {
  pageUrl: string;
  gateway: RunningGateway;
  /** a CLI client, for checking what the page did */
  client(): Promise<GatewayClient>;
  stop(): Promise<void>;
  restart(): Promise<void>;
  close(): Promise<void>;
}

/** Starts a gateway with the offline model (or `models` by ref, `token` and channel `adapters` when given) on an ephemeral port. */
export async function startUiGateway(
  options: {
    token?: string;
    config?: Record<string, unknown>;
    models?: Record<string, LanguageModel>;
    adapters?: ChannelAdapter[];
  } = {},
) {
  const home = await tempHome();
  const { config } = parseConfig(options.config ?? {});
  const clients: GatewayClient[] = [];
  const start = (port: number) =>
    startGateway({
      config,
      home,
      homeDir: home,
      logger: createMemoryLogger(),
      port,
      resolveModel: (ref) => ({
        model: options.models?.[ref] ?? createOfflineModel(),
        ref,
        offline: ref.startsWith("offline/"),
      }),
      ...(options.token && { token: options.token }),
      ...(options.adapters && { adapters: options.adapters }),
      retry: { minDelayMs: 10, maxDelayMs: 50 },
    });
  let gateway: RunningGateway | undefined = await start(0);
  const port = gateway.port;
  const ui: UiGateway = {
    pageUrl: `http://127.0.0.1:${port}/`,
    get gateway() {
      return gateway!;
    },
    async client() {
      const client = await connectGateway(gateway!.url, options.token);
      clients.push(client);
      return client;
    },
    async stop() {
      await Promise.all(clients.splice(0).map((c) => c.close()));
      await gateway?.close();
      gateway = undefined;
    },
    async restart() {
      gateway = await start(port);
    },
    close: () => ui.stop(),
  };
  return ui;
}

/** Starts a UI gateway before the calling block's tests and closes it after them; the getter gives it. */
export function useUiGateway(options: Parameters<typeof startUiGateway>[0] = {}): () => UiGateway {
  let ui: UiGateway | undefined;
  beforeAll(async () => {
    ui = await startUiGateway(options);
  }, 60_000);
  afterAll(async () => {
    await ui?.close();
  });
  return () => ui!;
}
