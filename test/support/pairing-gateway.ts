// A real gateway with the real Telegram adapter on the fake Bot API, owner 111, DMs under dmPolicy "pairing".
import { createConfiguredAdapters } from "../../adapters/index.js";
import { parseConfig } from "../../src/config/index.js";
import { type FakeTelegramServer, TEST_BOT } from "../fakes/fake-telegram-server.js";
import { startTestGateway } from "./test-gateway.js";

/** Starts it on `home`; `telegram` adds or replaces `channels.telegram` fields. Close it with `close()`. */
export async function startPairingGateway(
  home: string,
  fake: FakeTelegramServer,
  telegram: Record<string, unknown> = {},
) {
  const raw = {
    channels: {
      telegram: { botToken: TEST_BOT.token, apiRoot: fake.apiRoot, owners: ["111"], dmPolicy: "pairing", ...telegram },
    },
  };
  const adapters = await createConfiguredAdapters(parseConfig(raw).config, {
    home,
    env: {},
    logger: { debug() {}, info() {}, warn() {}, error() {} },
  });
  return startTestGateway({ home, config: raw, adapters });
}
