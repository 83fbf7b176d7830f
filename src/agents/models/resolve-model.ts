import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";
import type { LanguageModel } from "ai";
import type { Config } from "../../config/index.js";
import { ErrorCodes, SwitchboardError } from "../../errors.js";
import { MODEL_PROVIDERS, isModelProvider, parseModelRefOrThrow } from "./model-ref.js";
import { createOfflineModel } from "./offline-model.js";

/** Public endpoints used when neither config nor environment names one. */
const DEFAULT_BASE_URLS = {
  openai: "https://api.openai.com/v1",
  anthropic: "https://api.anthropic.com/v1",
} as const;

/** Sent to a custom OpenAI-compatible endpoint that has no key (Ollama, LM Studio ignore it). */
export const PLACEHOLDER_API_KEY = "switchboard-no-key";

/** What {@link resolveModel} needs: the `models` config, the environment and (in tests) a fetch. */
export interface ResolveModelDeps {
  models: Config["models"];
  env: Readonly<Record<string, string | undefined>>;
  fetch?: typeof fetch;
}

/** A runnable model and the canonical `provider/model` it came from. */
export interface ResolvedModel {
  model: LanguageModel;
  ref: string;
  /** true for the built-in offline model, which needs no network */
  offline: boolean;
}

const LOCAL_SERVER_HINT =
  " For a local OpenAI-compatible server (Ollama, vLLM, LM Studio) set models.providers.openai.baseUrl or OPENAI_BASE_URL instead.";

const nonEmpty = (value: string | undefined) => (value?.trim() ? value.trim() : undefined);

function missingKey(ref: string, provider: string, envVar: string, hint = ""): SwitchboardError {
  return new SwitchboardError(
    ErrorCodes.INVALID_ARGUMENT,
    `No API key for "${ref}". Set ${envVar} or models.providers.${provider}.apiKey in switchboard.json5.${hint}`,
  );
}

/**
 * Turns a model reference (`provider/model` or an alias of `models.aliases`) into a model.
 * Endpoints and keys come from config first, then `deps.env`; `process.env` is never read.
 */
export function resolveModel(ref: string, deps: ResolveModelDeps): ResolvedModel {
  const { provider, model } = parseModelRefOrThrow(ref, deps.models.aliases);
  const canonical = `${provider}/${model}`;
  if (!isModelProvider(provider)) {
    throw new SwitchboardError(
      ErrorCodes.INVALID_ARGUMENT,
      `Unknown model provider "${provider}" in "${ref}". Valid providers: ${MODEL_PROVIDERS.join(", ")}.`,
    );
  }
  const fetchOption = deps.fetch ? { fetch: deps.fetch } : {};
  switch (provider) {
    case "offline":
      return { model: createOfflineModel(model), ref: canonical, offline: true };
    case "openai": {
      const settings = deps.models.providers.openai;
      const customUrl = nonEmpty(settings?.baseUrl) ?? nonEmpty(deps.env.OPENAI_BASE_URL);
      const apiKey =
        nonEmpty(settings?.apiKey) ??
        nonEmpty(deps.env.OPENAI_API_KEY) ??
        (customUrl ? PLACEHOLDER_API_KEY : undefined);
      if (apiKey === undefined) throw missingKey(canonical, "openai", "OPENAI_API_KEY", LOCAL_SERVER_HINT);
      // Chat Completions, not the Responses API: every OpenAI-compatible server implements it.
      const openai = createOpenAI({ baseURL: customUrl ?? DEFAULT_BASE_URLS.openai, apiKey, ...fetchOption });
      return { model: openai.chat(model), ref: canonical, offline: false };
    }
    case "anthropic": {
      const settings = deps.models.providers.anthropic;
      const apiKey = nonEmpty(settings?.apiKey) ?? nonEmpty(deps.env.ANTHROPIC_API_KEY);
      if (apiKey === undefined) throw missingKey(canonical, "anthropic", "ANTHROPIC_API_KEY");
      const baseURL =
        nonEmpty(settings?.baseUrl) ?? nonEmpty(deps.env.ANTHROPIC_BASE_URL) ?? DEFAULT_BASE_URLS.anthropic;
      return { model: createAnthropic({ baseURL, apiKey, ...fetchOption })(model), ref: canonical, offline: false };
    }
  }
}
