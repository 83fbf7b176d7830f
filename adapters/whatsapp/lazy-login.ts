import type { LoginRequest, WhatsAppLoginDeps } from "./whatsapp-login.js";

/**
 * {@link createWhatsAppLogin} behind a dynamic import: `bin/switchboard` builds the login hooks for
 * every command, and only `channels login|logout|status whatsapp` should load baileys.
 */
export function createLazyWhatsAppLogin(deps: WhatsAppLoginDeps = {}) {
  const load = async () => (await import("./whatsapp-login.js")).createWhatsAppLogin(deps);
  return {
    login: async (request: LoginRequest) => (await load()).login(request),
    logout: async (request: LoginRequest) => (await load()).logout(request),
    status: async (request: Pick<LoginRequest, "config" | "home">) => (await load()).status(request),
  };
}
