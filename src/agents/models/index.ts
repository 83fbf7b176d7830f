export { buildModelCatalog } from "./model-catalog.js";
export { MODEL_PROVIDERS, resolveAlias } from "./model-ref.js";
export { createOfflineModel } from "./offline-model.js";
export { resolveModel } from "./resolve-model.js";
export type { ResolvedModel } from "./resolve-model.js";
export { routeSdkWarnings } from "./route-sdk-warnings.js";
