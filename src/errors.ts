/**
 * The error family's public path: the catalogue of codes (`errors/error-catalogue.ts`), the error
 * classes (`errors/switchboard-error.ts`) and the three edges that turn an error into text
 * (`errors/error-edges.ts`). See docs/architecture.md.
 */
export { ERROR_CATALOGUE, ErrorCodes, type ErrorCode, type GatewayErrorCode } from "./errors/error-catalogue.js";
export {
  ConfigError,
  DeliveryError,
  GatewayError,
  InternalError,
  SwitchboardError,
  ToolArgumentError,
  isSwitchboardError,
} from "./errors/switchboard-error.js";
export {
  apology,
  chatErrorText,
  httpStatusOf,
  logError,
  resultError,
  statusErrorText,
} from "./errors/error-edges.js";
