// The core's public index: adapters import from here and nowhere else.
export * from "./errors.js";
export * from "./logger.js";
export * from "./config/index.js";
export * from "./routing/index.js";
export * from "./delivery/index.js";
