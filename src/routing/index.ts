export * from "./normalize.js";
export * from "./session-key.js";
export * from "./parse-session-key.js";
export * from "./build-session-key.js";
export * from "./session-key-input.js";
export * from "./identity-links.js";
export * from "./resolve-route.js";
export * from "./inbound-message.js";
