import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { generateText } from "ai";
import { afterEach, describe, expect, it } from "vitest";
import { PLACEHOLDER_API_KEY, resolveModel } from "../../../src/agents/models/resolve-model.js";
import { ConfigSchema, type ConfigInput } from "../../../src/config/index.js";
import { ErrorCodes } from "../../../src/errors.js";

const modelsOf = (models: ConfigInput["models"] = {}) => ConfigSchema.parse({ models }).models;

interface Received {
  url: string;
  headers: IncomingHttpHeaders;
  body: { model?: string; messages?: unknown[] };
}

const servers: Array<{ close: () => void }> = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.close();
});

/** A fake OpenAI-compatible server (what Ollama exposes) answering every chat completion with `text`. */
async function fakeOpenAiServer(text: string): Promise<{ baseUrl: string; received: Received[] }> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    let raw = "";
    req.on("data", (chunk: Buffer) => (raw += chunk.toString()));
    req.on("end", () => {
      received.push({ url: req.url ?? "", headers: req.headers, body: JSON.parse(raw) as Received["body"] });
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          id: "chatcmpl-1",
          object: "chat.completion",
          created: 1_700_000_000,
          model: "llama3.2",
          choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }],
          usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  servers.push(server);
  return { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, received };
}

describe("resolveModel", () => {
  it("resolves an alias to its canonical provider/model", () => {
    const resolved = resolveModel("quick", { models: modelsOf({ aliases: { quick: "offline/fast" } }), env: {} });
    expect(resolved.ref).toBe("offline/fast");
    expect(resolved.offline).toBe(true);
  });

  it("returns the offline model for offline/<anything>", () => {
    const resolved = resolveModel("Offline/demo", { models: modelsOf(), env: {} });
    expect(resolved).toMatchObject({
      ref: "offline/demo",
      offline: true,
      model: { provider: "offline", modelId: "demo" },
    });
  });

  it("sends a chat-completions request to a custom OpenAI-compatible endpoint without a key", async () => {
    const server = await fakeOpenAiServer("Hello from Ollama");
    const resolved = resolveModel("openai/llama3.2", {
      models: modelsOf({ providers: { openai: { baseUrl: server.baseUrl } } }),
      env: {},
    });
    const result = await generateText({ model: resolved.model, prompt: "hi" });
    expect(result.text).toBe("Hello from Ollama");
    expect(resolved).toMatchObject({ ref: "openai/llama3.2", offline: false });
    expect(server.received).toHaveLength(1);
    expect(server.received[0]).toMatchObject({ url: "/v1/chat/completions", body: { model: "llama3.2" } });
    expect(server.received[0]!.headers.authorization).toBe(`Bearer ${PLACEHOLDER_API_KEY}`);
  });

  it("takes the endpoint from OPENAI_BASE_URL and the key from OPENAI_API_KEY when config has neither", async () => {
    const server = await fakeOpenAiServer("ok");
    const resolved = resolveModel("openai/gpt-4o-mini", {
      models: modelsOf(),
      env: { OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: "sk-env" },
    });
    await generateText({ model: resolved.model, prompt: "hi" });
    expect(server.received[0]!.headers.authorization).toBe("Bearer sk-env");
  });

  it("prefers the configured key over the environment", async () => {
    const server = await fakeOpenAiServer("ok");
    const models = modelsOf({ providers: { openai: { baseUrl: server.baseUrl, apiKey: "sk-config" } } });
    await generateText({
      model: resolveModel("openai/m", { models, env: { OPENAI_API_KEY: "sk-env" } }).model,
      prompt: "hi",
    });
    expect(server.received[0]!.headers.authorization).toBe("Bearer sk-config");
  });

  it("passes the given fetch to the anthropic provider", async () => {
    const requests: Array<{ url: string; key: string | null }> = [];
    const fakeFetch: typeof fetch = async (input, init) => {
      requests.push({ url: String(input), key: new Headers(init?.headers).get("x-api-key") });
      const body = {
        id: "msg_1",
        type: "message",
        role: "assistant",
        model: "claude-sonnet-4-5",
        content: [{ type: "text", text: "Hi from Claude" }],
        stop_reason: "end_turn",
        stop_sequence: null,
        usage: { input_tokens: 3, output_tokens: 4 },
      };
      return new Response(JSON.stringify(body), { headers: { "content-type": "application/json" } });
    };
    const resolved = resolveModel("anthropic/claude-sonnet-4-5", {
      models: modelsOf(),
      env: { ANTHROPIC_API_KEY: "sk-ant" },
      fetch: fakeFetch,
    });
    expect((await generateText({ model: resolved.model, prompt: "hi" })).text).toBe("Hi from Claude");
    expect(requests).toEqual([{ url: "https://api.anthropic.com/v1/messages", key: "sk-ant" }]);
  });

  it.each([
    ["openai/gpt-4o", "OPENAI_API_KEY or models.providers.openai.apiKey"],
    ["anthropic/claude-sonnet-4-5", "ANTHROPIC_API_KEY or models.providers.anthropic.apiKey"],
  ])("says which setting is missing when %s has no key", (ref, hint) => {
    expect(() => resolveModel(ref, { models: modelsOf(), env: {} })).toThrow(
      expect.objectContaining({ code: ErrorCodes.INVALID_ARGUMENT, message: expect.stringContaining(hint) }),
    );
  });

  it("lists the valid providers for an unknown one", () => {
    expect(() => resolveModel("mistral/large", { models: modelsOf(), env: {} })).toThrow(
      'Unknown model provider "mistral" in "mistral/large". Valid providers: openai, anthropic, offline.',
    );
  });

  it("rejects a name that is neither provider/model nor an alias", () => {
    expect(() =>
      resolveModel("gpt4", { models: modelsOf({ aliases: { mini: "openai/gpt-4o-mini" } }), env: {} }),
    ).toThrow(
      expect.objectContaining({
        code: ErrorCodes.INVALID_ARGUMENT,
        message: expect.stringContaining("an alias (mini)"),
      }),
    );
  });
});
