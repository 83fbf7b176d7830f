export * from "./schema/index.js";
export * from "./load-config.js";
export * from "./parse-config.js";
export * from "./paths.js";
export * from "./mask-secrets.js";
export { formatPath } from "./format-issues.js";
export * from "./channel-table.js";
export * from "./entry-prefix.js";
