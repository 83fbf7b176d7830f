import { mkdtemp } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { LanguageModel } from "ai";
import { CHANNELS } from "../../adapters/index.js";
import { createOfflineModel } from "../../src/agents/models/index.js";
import { connectGateway, type GatewayClient } from "../../src/cli/gateway-client.js";
import { parseConfig } from "../../src/config/index.js";
import type { ChannelAdapter } from "../../src/delivery/channel-adapter.js";
import type { ConnectionLimits } from "../../src/gateway/connection-limits.js";
import { type RunningGateway, startGateway } from "../../src/gateway/start-gateway.js";
import { createMemoryLogger } from "../../src/logger.js";
import { closedAfterEach } from "./closed-after-each.js";

/** A temporary SWITCHBOARD_HOME. */
export async function tempHome(): Promise<string> {
  return mkdtemp(path.join(os.tmpdir(), "sb-gw-"));
}

/** Starts a real gateway on an ephemeral loopback port with the given config, model and adapters. */
export async function startTestGateway(
  options: {
    home?: string;
    config?: Record<string, unknown>;
    model?: LanguageModel;
    models?: Record<string, LanguageModel>;
    adapters?: ChannelAdapter[];
    token?: string;
    chatTurnsAtOnce?: number;
    now?: () => number;
    connectionLimits?: Partial<ConnectionLimits>;
  } = {},
) {
  const home = options.home ?? (await tempHome());
  // Checked against the channel table, as the CLI does: each channel's groups are found under its own name.
  const { config } = parseConfig(options.config ?? {}, "config", CHANNELS);
  const logger = createMemoryLogger();
  const model = options.model ?? createOfflineModel();
  const gateway: RunningGateway = await startGateway({
    config,
    home,
    homeDir: home,
    logger,
    port: 0,
    // Per-ref models (`models`) let each agent have its own script; anything else gets `model`.
    resolveModel: (ref) => ({ model: options.models?.[ref] ?? model, ref, offline: ref.startsWith("offline/") }),
    ...(options.adapters && { adapters: options.adapters }),
    ...(options.token && { token: options.token }),
    retry: { minDelayMs: 10, maxDelayMs: 50 },
    ...(options.now && { now: options.now }),
    ...(options.connectionLimits && { connectionLimits: options.connectionLimits }),
    ...(options.chatTurnsAtOnce !== undefined && { chatTurnsAtOnce: options.chatTurnsAtOnce }),
  });
  const clients: GatewayClient[] = [];
  return {
    home,
    gateway,
    logger,
    /** A connected client subscribed to every session's events (an operator client). */
    async client(token = options.token): Promise<GatewayClient> {
      const client = await connectGateway(gateway.url, token);
      clients.push(client);
      await client.call("subscribe", { all: true });
      return client;
    },
    async close(): Promise<void> {
      await Promise.all(clients.map((c) => c.close()));
      await gateway.close();
    },
  };
}

/** Resolves with the next event of `name` that matches `accept`. */
export function nextEvent<T>(
  client: GatewayClient,
  name: string,
  accept: (payload: T) => boolean = () => true,
): Promise<T> {
  return new Promise((resolve) => {
    const off = client.onEvent((event, payload) => {
      if (event === name && accept(payload as T)) {
        off();
        resolve(payload as T);
      }
    });
  });
}

/** A test gateway as {@link startTestGateway} returns it. */
export type TestGateway = Awaited<ReturnType<typeof startTestGateway>>;

/** Returns a `start` function whose gateways are all closed after each test of the calling file. */
export function useTestGateways(): (options?: Parameters<typeof startTestGateway>[0]) => Promise<TestGateway> {
  return closedAfterEach(startTestGateway);
}
