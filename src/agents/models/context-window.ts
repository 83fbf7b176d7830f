import type { Config } from "../../config/schema/index.js";

/** The window assumed for a model neither the config nor the built-in table knows. */
const DEFAULT_CONTEXT_WINDOW = 128_000;

// Prefixes of `provider/model`, longest first wins; numbers from the providers' model pages.
const BUILT_IN: ReadonlyArray<readonly [string, number]> = [
  ["offline/", 32_000],
  ["openai/gpt-4.1", 1_047_576],
  ["openai/gpt-4o", 128_000],
  ["openai/gpt-5", 400_000],
  ["openai/o1", 200_000],
  ["openai/o3", 200_000],
  ["openai/o4", 200_000],
  ["anthropic/claude", 200_000],
];

/** A model's context window in tokens: `models.contextWindows[ref]`, else the built-in table, else {@link DEFAULT_CONTEXT_WINDOW}. */
export function contextWindowOf(config: Pick<Config, "models">, ref: string): number {
  const configured = config.models.contextWindows[ref];
  if (configured !== undefined) return configured;
  const lower = ref.toLowerCase();
  const match = BUILT_IN.filter(([prefix]) => lower.startsWith(prefix)).sort((a, b) => b[0].length - a[0].length)[0];
  return match?.[1] ?? DEFAULT_CONTEXT_WINDOW;
}
