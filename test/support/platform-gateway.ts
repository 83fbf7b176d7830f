// The real gateway with one platform's adapter as the CLI would create it (createConfiguredAdapters),
// pointed at a fake platform: the one in-process harness of the scenario tests in test/e2e/ for
// Telegram, Discord and WhatsApp (test/fakes/platform-gateway-process.ts is its child-process twin).
import type { LanguageModel } from "ai";
import { createConfiguredAdapters } from "../../adapters/index.js";
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
  /** passed to createConfiguredAdapters: the fake WhatsApp socket */
  whatsappSocket?: Parameters<typeof createConfiguredAdapters>[1]["whatsappSocket"];
}

/** Platform logs are not what these tests read. */
const silent = { debug() {}, info() {}, warn() {}, error() {} };

/** Starts the gateway in `home` (default a new temporary one); close it with `close()`. */
export async function startPlatformGateway(options: PlatformGatewayOptions): Promise<TestGateway> {
  const home = options.home ?? (await tempHome());
  const raw = { ...options.config, channels: { [options.channel.id]: options.channel.settings } };
  const { config } = parseConfig(raw);
  const adapters = options.adapters
    ? options.adapters(config, home)
    : createConfiguredAdapters(config, {
        home,
        env: {},
        logger: silent,
        ...(options.whatsappSocket && { whatsappSocket: options.whatsappSocket }),
      });
  return startTestGateway({
    home,
    config: raw,
    adapters,
    ...(options.model && { model: options.model }),
    ...(options.models && { models: options.models }),
    ...(options.now && { now: options.now }),
  });
}
