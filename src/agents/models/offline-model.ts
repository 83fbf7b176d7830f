import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3Content,
  LanguageModelV3GenerateResult,
  LanguageModelV3Prompt,
  LanguageModelV3StreamPart,
} from "./language-model-v3.js";
import { usageOf } from "./language-model-v3.js";
import { type OfflineReply, decideOfflineReply } from "./offline-reply.js";

/** What the built-in offline model understands; shown by /status and the README. */
export const OFFLINE_MODEL_HELP =
  'The offline model needs no network or API key and answers deterministically: "list sessions" calls sessions_list, ' +
  '"send to <key>: <text>" calls sessions_send, "spawn: <task>" calls sessions_spawn, "history <key>" calls sessions_history, ' +
  '"agents" or "list agents" calls agents_list, and it then summarises the tool result; a bare /new or /reset gets a short ' +
  'greeting, and anything else is echoed back as "Echo: <your text>".';

/** The characters /\s/ matches from U+00A0 up. */
function isWideSpace(c: number): boolean {
  return (
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}

/** Runs of non-whitespace in `text`, counted without building them (the prompt is counted every call). */
function words(text: string): number {
  let count = 0;
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const space = c <= 0x20 ? c === 0x20 || (c >= 0x09 && c <= 0x0d) : c >= 0xa0 && isWideSpace(c);
    if (space) inWord = false;
    else if (!inWord) {
      inWord = true;
      count++;
    }
  }
  return count;
}

function promptWords(prompt: LanguageModelV3Prompt): number {
  return prompt.reduce(
    (sum, message) =>
      sum + words(typeof message.content === "string" ? message.content : JSON.stringify(message.content)),
    0,
  );
}

// FNV-1a: a deterministic tool-call id that still differs between turns (the prompt grows).
function hashOf(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return (hash >>> 0).toString(16).padStart(8, "0");
}

interface OfflineAnswer {
  reply: OfflineReply;
  result: LanguageModelV3GenerateResult;
}

function answer(options: LanguageModelV3CallOptions): OfflineAnswer {
  options.abortSignal?.throwIfAborted();
  const toolNames = new Set((options.tools ?? []).map((tool) => tool.name));
  const reply = decideOfflineReply(options.prompt, toolNames);
  const content: LanguageModelV3Content =
    reply.type === "text"
      ? { type: "text", text: reply.text }
      : {
          type: "tool-call",
          toolCallId: `offline_${hashOf(JSON.stringify(options.prompt))}`,
          toolName: reply.toolName,
          input: JSON.stringify(reply.input),
        };
  const outputWords =
    reply.type === "text" ? words(reply.text) : words(`${reply.toolName} ${Object.values(reply.input).join(" ")}`);
  const finishReason = reply.type === "text" ? "stop" : "tool-calls";
  const result: LanguageModelV3GenerateResult = {
    content: [content],
    finishReason: { unified: finishReason, raw: finishReason },
    usage: usageOf(promptWords(options.prompt), outputWords),
    warnings: [],
  };
  return { reply, result };
}

function streamParts({ reply, result }: OfflineAnswer): LanguageModelV3StreamPart[] {
  const [content] = result.content;
  const body: LanguageModelV3StreamPart[] =
    reply.type === "text"
      ? [
          { type: "text-start", id: "t0" },
          { type: "text-delta", id: "t0", delta: reply.text },
          { type: "text-end", id: "t0" },
        ]
      : content?.type === "tool-call"
        ? [content]
        : [];
  return [
    { type: "stream-start", warnings: [] },
    ...body,
    { type: "finish", usage: result.usage, finishReason: result.finishReason },
  ];
}

/** The built-in `offline/<id>` model: deterministic, network-free, and able to call the session tools. */
export function createOfflineModel(id = "echo"): LanguageModelV3 {
  return {
    specificationVersion: "v3",
    provider: "offline",
    modelId: id,
    supportedUrls: {},
    doGenerate: async (options) => answer(options).result,
    doStream: async (options) => {
      const parts = streamParts(answer(options));
      return {
        stream: new ReadableStream<LanguageModelV3StreamPart>({
          start(controller) {
            for (const part of parts) controller.enqueue(part);
            controller.close();
          },
        }),
      };
    },
  };
}
