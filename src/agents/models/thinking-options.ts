/** The thinking levels `/think` accepts, least first. */
const THINKING_LEVELS = ["off", "minimal", "low", "medium", "high"] as const;
type ThinkingLevel = (typeof THINKING_LEVELS)[number];

/** Provider options as `generateText` takes them. */
export type ProviderOptions = Record<string, Record<string, never> | Record<string, unknown>>;

// Token budgets for Anthropic's extended thinking (1024 is its minimum).
const ANTHROPIC_BUDGET: Readonly<Record<Exclude<ThinkingLevel, "off">, number>> = {
  minimal: 1024,
  low: 2048,
  medium: 8192,
  high: 16_384,
};

/** True when `provider/model` reasons on request: OpenAI o-series and GPT-5, Claude 3.7 and 4. */
export function supportsThinking(ref: string): boolean {
  const lower = ref.toLowerCase();
  if (lower.startsWith("openai/")) return /^openai\/(o\d|gpt-5)/.test(lower);
  if (lower.startsWith("anthropic/")) return /claude-(3-7|(opus|sonnet|haiku)-4|4)/.test(lower);
  return false;
}

/** The provider options that ask `ref` for `level` of thinking; undefined when off or the model cannot reason. */
export function thinkingOptions(ref: string, level: string | undefined): ProviderOptions | undefined {
  if (!level || level === "off" || !(THINKING_LEVELS as readonly string[]).includes(level) || !supportsThinking(ref))
    return undefined;
  const thinking = level as Exclude<ThinkingLevel, "off">;
  if (ref.toLowerCase().startsWith("openai/")) return { openai: { reasoningEffort: thinking } };
  return { anthropic: { thinking: { type: "enabled", budgetTokens: ANTHROPIC_BUDGET[thinking] } } };
}
