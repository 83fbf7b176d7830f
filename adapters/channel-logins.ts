// The WhatsApp modules named one by one: whatsapp/index.ts would load baileys for every CLI command.
import { createLazyWhatsAppLogin } from "./whatsapp/lazy-login.js";
import type { WhatsAppLoginDeps } from "./whatsapp/whatsapp-login.js";

/**
 * The channels that link as a device, for `switchboard channels login|logout|status`. A file of its
 * own, apart from adapters/index.ts, so the CLI gets them without loading grammy or discord.js.
 */
export function createChannelLogins(deps: { whatsapp?: WhatsAppLoginDeps } = {}) {
  return { whatsapp: createLazyWhatsAppLogin(deps.whatsapp) };
}
