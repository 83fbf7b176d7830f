import { SwitchboardError, ErrorCodes } from "../../errors.js";

/** Providers a `provider/model` reference may name. */
export const MODEL_PROVIDERS = ["openai", "anthropic", "offline"] as const;
export type ModelProvider = (typeof MODEL_PROVIDERS)[number];

/** A `provider/model` reference split in two; the provider is lowercased, the model kept as written. */
export interface ModelRef {
  provider: string;
  model: string;
}

/** Splits `provider/model` at the first '/'; undefined when either side is empty. */
export function parseModelRef(ref: string): ModelRef | undefined {
  const trimmed = ref.trim();
  const slash = trimmed.indexOf("/");
  if (slash <= 0 || slash === trimmed.length - 1) return undefined;
  return { provider: trimmed.slice(0, slash).toLowerCase(), model: trimmed.slice(slash + 1) };
}

/** The `provider/model` an alias of `models.aliases` points to (exact name first, then ignoring case); else `ref` itself. */
export function resolveAlias(ref: string, aliases: Readonly<Record<string, string>>): string {
  const trimmed = ref.trim();
  if (Object.hasOwn(aliases, trimmed)) return aliases[trimmed]!;
  const lower = trimmed.toLowerCase();
  const match = Object.keys(aliases).find((name) => name.toLowerCase() === lower);
  return match === undefined ? trimmed : aliases[match]!;
}

/** Resolves an alias and parses the result, or throws INVALID_ARGUMENT saying what a reference looks like. */
export function parseModelRefOrThrow(ref: string, aliases: Readonly<Record<string, string>>): ModelRef {
  const parsed = parseModelRef(resolveAlias(ref, aliases));
  if (parsed) return parsed;
  const names = Object.keys(aliases);
  const known = names.length > 0 ? `an alias (${names.join(", ")})` : "an alias from models.aliases";
  throw new SwitchboardError(
    ErrorCodes.INVALID_ARGUMENT,
    `Unknown model "${ref}". Use "provider/model" (e.g. "offline/echo", "openai/gpt-4o-mini") or ${known}.`,
  );
}

/** Type guard for a provider this build can run. */
export function isModelProvider(provider: string): provider is ModelProvider {
  return (MODEL_PROVIDERS as readonly string[]).includes(provider);
}
