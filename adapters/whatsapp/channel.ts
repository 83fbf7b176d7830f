import type { ChannelDefinition } from "../../src/index.js";
// The WhatsApp modules named one by one: whatsapp/index.ts would load baileys for every CLI command.
import { type WhatsAppConfig, type WhatsAppSettings, whatsappConfig } from "./whatsapp-config.js";
import type { WhatsAppLoginDeps } from "./whatsapp-login.js";
import type { WhatsAppSocketFactory } from "./whatsapp-socket.js";

/** What tests replace in the WhatsApp channel: the socket (a fake built on baileys' event emitter) and the login's QR rendering. */
export interface WhatsAppChannelOptions {
  socketFactory?: WhatsAppSocketFactory;
  login?: WhatsAppLoginDeps;
}

/**
 * The WhatsApp channel: a linked device per account, so it has a `login` as well. baileys loads
 * only when an adapter is created or a login runs, never for other CLI commands.
 */
export function createWhatsAppChannel(
  options: WhatsAppChannelOptions = {},
): ChannelDefinition<WhatsAppSettings, WhatsAppConfig> {
  const loadLogin = async () => (await import("./whatsapp-login.js")).createWhatsAppLogin(options.login);
  return {
    ...whatsappConfig,
    async create(section, deps) {
      const { createWhatsAppAdapter } = await import("./whatsapp-adapter.js");
      return createWhatsAppAdapter(section, {
        home: deps.home,
        logger: deps.logger,
        ...(options.socketFactory && { socketFactory: options.socketFactory }),
      });
    },
    login: {
      login: async (request) => (await loadLogin()).login(request),
      logout: async (request) => (await loadLogin()).logout(request),
      status: async (request) => (await loadLogin()).status(request),
    },
  };
}

/** The WhatsApp channel for the table in adapters/index.ts. */
export const whatsappChannel = createWhatsAppChannel();
