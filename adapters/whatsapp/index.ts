// The WhatsApp adapter (baileys): everything the wiring, the CLI and the tests use.
export { type WhatsAppAdapter, type WhatsAppAdapterDeps, createWhatsAppAdapter } from "./whatsapp-adapter.js";
export { type InboundContext, type UpsertItem, mapUpsert, toInbound } from "./to-inbound.js";
export { markdownToWhatsApp } from "./markdown-to-whatsapp.js";
export {
  type WhatsAppAccount,
  type WhatsAppConfig,
  defaultAuthDir,
  resolveWhatsAppAccounts,
} from "./whatsapp-accounts.js";
export { type WhatsAppTarget, parseWhatsAppTarget, whatsappTargets } from "./whatsapp-target.js";
export { type WhatsAppSocket, type WhatsAppSocketFactory, baileysSocketFactory } from "./whatsapp-socket.js";
export { type ReconnectBackoff, DEFAULT_BACKOFF, decideReconnect, relinkMessage } from "./reconnect-policy.js";
export { openAuthState, credsSavedAt } from "./auth-state.js";
export { type AccountStatus, readAccountStatus, statusFilePath } from "./account-status.js";
export { toDeliveryError } from "./whatsapp-errors.js";
export { type LoginRequest, type WhatsAppLoginDeps, createWhatsAppLogin } from "./whatsapp-login.js";
