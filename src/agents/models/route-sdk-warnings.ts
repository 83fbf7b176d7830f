import type { Logger } from "../../logger.js";

/**
 * Sends the AI SDK's model warnings to `logger` instead of the console (the SDK prints them to
 * stdout, which the CLI keeps for its output). The SDK reads this from a global; the gateway sets it once at start.
 */
export function routeSdkWarnings(logger: Logger): void {
  globalThis.AI_SDK_LOG_WARNINGS = ({ warnings, provider, model }) =>
    logger.warn({ provider, model, warnings }, "model warnings");
}
