// The WhatsApp adapter (baileys): everything the wiring, the CLI and the tests use.
export { type WhatsAppAdapter, createWhatsAppAdapter } from "./whatsapp-adapter.js";
export { type InboundContext, type UpsertItem, mapUpsert, toInbound } from "./to-inbound.js";
export { markdownToWhatsApp } from "./markdown-to-whatsapp.js";
export { defaultAuthDir } from "./whatsapp-accounts.js";
export { type WhatsAppSocket, type WhatsAppSocketFactory, baileysSocketFactory } from "./whatsapp-socket.js";
export { DEFAULT_BACKOFF, decideReconnect } from "./reconnect-policy.js";
export { openAuthState } from "./auth-state.js";
export { readAccountStatus } from "./account-status.js";
