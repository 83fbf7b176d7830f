// The real gateway with one platform's adapter as the CLI would create it (createConfiguredAdapters
// over the channel table), pointed at a fake platform: the one in-process harness of the scenario
// tests in test/e2e/ for Telegram, Discord and WhatsApp (test/fakes/platform-gateway-process.ts is
// its child-process twin).
import type { LanguageModel } from "ai";
import { CHANNELS, createConfiguredAdapters } from "../../adapters/index.js";
import { createWhatsAppChannel } from "../../adapters/whatsapp/channel.js";
import type { WhatsAppSocketFactory } from "../../adapters/whatsapp/index.js";
import { parseConfig } from "../../src/config/index.js";
import type { ChannelAdapter } from "../../src/delivery/channel-adapter.js";
import { type TestGateway, startTestGateway, tempHome } from "./test-gateway.js";

/** What {@link startPlatformGateway} takes. */
export interface PlatformGatewayOptions {
  /** the channel and its `channels.<id>` section, the fake's token and address included */
  channel: { id: "telegram" | "discord" | "whatsapp"; settings: Record<string, unknown> };
  home?: string;
  model?: LanguageModel;
  models?: Record<string, LanguageModel>;
  /** config besides channels */
  config?: Record<string, unknown>;
  now?: () => number;
  /** the adapters instead of createConfiguredAdapters' (built from the parsed config), for a dependency it takes no option for */
  adapters?: (config: ReturnType<typeof parseConfig>["config"], home: string) => ChannelAdapter[];
  /** the fake WhatsApp socket: the table's WhatsApp channel is built on it */
  whatsappSocket?: WhatsAppSocketFactory;
}

/** Platform logs are not what these tests read. */
const silent = { debug() {}, info() {}, warn() {}, error() {} };

/** Starts the gateway in `home` (default a new temporary one); close it with `close()`. */
export async function startPlatformGateway(options: PlatformGatewayOptions): Promise<TestGateway> {
  const home = options.home ?? (await tempHome());
  const raw = { ...options.config, channels: { [options.channel.id]: options.channel.settings } };
  const socketFactory = options.whatsappSocket;
  const table = socketFactory
    ? CHANNELS.map((c) => (c.id === "whatsapp" ? createWhatsAppChannel({ socketFactory }) : c))
    : CHANNELS;
  const { config } = parseConfig(raw, "config", table);
  const adapters = options.adapters
    ? options.adapters(config, home)
    : await createConfiguredAdapters(config, { home, env: {}, logger: silent }, table);
  return startTestGateway({
    home,
    config: raw,
    adapters,
    ...(options.model && { model: options.model }),
    ...(options.models && { models: options.models }),
    ...(options.now && { now: options.now }),
  });
}
