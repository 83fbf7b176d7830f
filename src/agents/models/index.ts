export { buildModelCatalog, OFFLINE_DEFAULT_REF } from "./model-catalog.js";
export { MODEL_PROVIDERS, parseModelRef, resolveAlias } from "./model-ref.js";
export type { ModelProvider, ModelRef } from "./model-ref.js";
export { createOfflineModel, OFFLINE_MODEL_HELP } from "./offline-model.js";
export { OFFLINE_GREETING } from "./offline-reply.js";
export { DEFAULT_BASE_URLS, PLACEHOLDER_API_KEY, resolveModel } from "./resolve-model.js";
export type { ResolveModelDeps, ResolvedModel } from "./resolve-model.js";
export { routeSdkWarnings } from "./route-sdk-warnings.js";
