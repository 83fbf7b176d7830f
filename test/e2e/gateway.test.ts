import { readFile, readdir } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { GatewayCallError } from "../../src/cli/gateway-client.js";
import { parseConfig } from "../../src/config/index.js";
import { startGateway } from "../../src/gateway/start-gateway.js";
import { createMemoryLogger } from "../../src/logger.js";
import { InboundMessageSchema } from "../../src/routing/index.js";
import { createFakeChannelAdapter } from "../fakes/fake-channel-adapter.js";
import { createScriptedModel } from "../fakes/scripted-model.js";
import { nextEvent, startTestGateway, tempHome, useTestGateways } from "../support/test-gateway.js";
import { ADA, telegramDm } from "../support/telegram-dm.js";

const start = useTestGateways();

const dm = (text: string, messageId: string) => telegramDm(text, { messageId, sender: ADA });
// The fake platform stands in for Telegram, whose access settings it uses.
// Anyone may DM the fake: each sender gets a session of their own.
const openFake = { channels: { telegram: { dmPolicy: "open" } }, session: { dmScope: "per-channel-peer" } };

async function transcriptLines(home: string, agentId = "main"): Promise<Array<{ role: string; content: unknown }>> {
  const dir = path.join(home, "agents", agentId, "sessions");
  const files = (await readdir(dir)).filter((f) => f.endsWith(".jsonl"));
  const lines = (await Promise.all(files.map((f) => readFile(path.join(dir, f), "utf8")))).join("").trim().split("\n");
  return lines
    .map((l) => JSON.parse(l))
    .filter((l) => l.type === "message")
    .map((l) => l.message);
}

describe("gateway chat", () => {
  it("answers chat.send from the offline model as a reply delivery, records the transcript and returns the run's text to agent.wait", async () => {
    const gw = await start();
    const client = await gw.client();
    const reply = nextEvent<{ text: string; kind: string }>(client, "chat.delivery", (p) => p.kind === "reply");
    const final = nextEvent<{ text?: string; state: string }>(client, "chat", (p) => p.state === "final");
    const sent = await client.call<{ runId: string; status: string; sessionKey: string }>("chat.send", {
      message: "hello there",
    });
    expect(sent).toMatchObject({ status: "started", sessionKey: "agent:main:main" });
    expect((await reply).text).toBe("Echo: hello there");
    // The run's end carries its state only: the reply reached the client as a delivery.
    expect((await final).text).toBeUndefined();
    expect(await client.call("agent.wait", { runId: sent.runId })).toMatchObject({
      status: "ok",
      text: "Echo: hello there",
    });
    const history = await client.call<{ messages: Array<{ role: string; content: unknown }> }>("chat.history", {
      sessionKey: "main",
    });
    expect(history.messages.map((m) => [m.role, m.content])).toEqual([
      ["user", "hello there"],
      ["assistant", [{ type: "text", text: "Echo: hello there" }]],
    ]);
  });

  it("answers three messages to one busy session, all of them, in order", async () => {
    const model = createScriptedModel([{ text: "one", delayMs: 150 }, { text: "two" }, { text: "three" }]);
    const fake = createFakeChannelAdapter({ id: "telegram" });
    const gw = await start({ model, adapters: [fake], config: openFake });
    const results = await Promise.all(
      ["a", "b", "c"].map((text, i) => gw.gateway.core.pipeline.handleInbound(dm(text, `m${i}`))),
    );
    await Promise.all(results.map((r) => (r.status === "queued" ? r.done : undefined)));
    expect(fake.texts()).toEqual(["one", "two", "three"]);
    expect(model.prompts).toHaveLength(3);
  });

  it("returns timeout with an error from agent.wait while the run goes on", async () => {
    const model = createScriptedModel([{ text: "slow answer", delayMs: 400 }]);
    const gw = await start({ model });
    const client = await gw.client();
    const { runId } = await client.call<{ runId: string }>("agent", { message: "think hard" });
    const waited = await client.call<{ status: string; error?: string }>("agent.wait", { runId, timeoutMs: 20 });
    expect(waited.status).toBe("timeout");
    expect(waited.error).toMatch(/goes on/);
    expect(await client.call("agent.wait", { runId, timeoutMs: 5_000 })).toMatchObject({
      status: "ok",
      text: "slow answer",
    });
  });

  it("ignores an inbound message replayed after a restart", async () => {
    const home = await tempHome();
    const fake = createFakeChannelAdapter({ id: "telegram" });
    const first = await startTestGateway({ home, adapters: [fake], config: openFake });
    const result = await first.gateway.core.pipeline.handleInbound(dm("only once", "m-1"));
    if (result.status === "queued") await result.done;
    await first.close();
    const second = await start({ home, adapters: [fake], config: openFake });
    expect(await second.gateway.core.pipeline.handleInbound(dm("only once", "m-1"))).toMatchObject({
      status: "duplicate",
    });
    expect(fake.texts()).toEqual(["Echo: only once"]);
  });

  it("records the turn of a denied session and delivers nothing", async () => {
    const fake = createFakeChannelAdapter({ id: "telegram" });
    const gw = await start({
      adapters: [fake],
      config: { ...openFake, session: { sendPolicy: { rules: [{ action: "deny", match: { channel: "telegram" } }] } } },
    });
    const result = await gw.gateway.core.pipeline.handleInbound(dm("are you there?", "m-deny"));
    expect(result.status).toBe("queued");
    if (result.status === "queued")
      expect(await result.done).toMatchObject({ status: "ok", text: "Echo: are you there?" });
    expect(fake.sent).toEqual([]);
    expect((await transcriptLines(gw.home)).map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(gw.logger.records.some((r) => r.message === "delivery denied by sendPolicy")).toBe(true);
  });

  it("retries a delivery that fails twice and delivers it once", async () => {
    const fake = createFakeChannelAdapter({ id: "telegram" });
    fake.failNext(2, "retryable");
    const gw = await start({ adapters: [fake], config: openFake });
    const result = await gw.gateway.core.pipeline.handleInbound(dm("flaky", "m-flaky"));
    if (result.status === "queued") await result.done;
    await expect.poll(() => fake.texts(), { timeout: 3_000 }).toEqual(["Echo: flaky"]);
    expect(fake.calls).toHaveLength(3);
  });

  it("gives the model the message a reply quotes, and quotes the answered message back", async () => {
    const model = createScriptedModel([{ text: "yes, that one" }]);
    const fake = createFakeChannelAdapter({ id: "telegram" });
    const gw = await start({ model, adapters: [fake], config: openFake });
    const message = InboundMessageSchema.parse({
      ...dm("is this right?", "m-quote"),
      replyTo: { messageId: "5", text: "Paris is the capital", fromBot: true },
    });
    const result = await gw.gateway.core.pipeline.handleInbound(message);
    if (result.status === "queued") await result.done;
    expect(JSON.stringify(model.prompts[0])).toContain(
      '[In reply to your earlier message: \\"Paris is the capital\\"]\\nis this right?',
    );
    expect(fake.sent[0]!.message).toMatchObject({ text: "yes, that one", replyToMessageId: "m-quote" });
  });

  it("routes a channel message by its chat and replies to that chat", async () => {
    const fake = createFakeChannelAdapter({ id: "telegram" });
    const gw = await start({ adapters: [fake], config: openFake });
    await fake.receive(dm("via the adapter", "m-adapter"));
    await expect
      .poll(() => fake.sent.map((s) => [s.target.to, s.message.text]), { timeout: 3_000 })
      .toEqual([["42", "Echo: via the adapter"]]);
    const rows = await (await gw.client()).call<{ sessions: Array<{ key: string; displayName?: string }> }>(
      "sessions.list",
      {},
    );
    expect(rows.sessions.map((r) => [r.key, r.displayName])).toEqual([["agent:main:telegram:dm:42", "Ada"]]);
  });
});

describe("gateway sessions", () => {
  it("aborts a slow run with chat.abort; the run ends aborted and the session remembers it", async () => {
    const model = createScriptedModel([{ text: "too late", delayMs: 5_000 }]);
    const gw = await start({ model });
    const client = await gw.client();
    const { runId } = await client.call<{ runId: string }>("chat.send", { message: "take your time" });
    await expect
      .poll(async () => (await client.call<{ status: string }>("agent.wait", { runId, timeoutMs: 0 })).status)
      .toBe("timeout");
    expect(await client.call("chat.abort", { sessionKey: "main" })).toMatchObject({ ok: true, aborted: [runId] });
    expect(await client.call("agent.wait", { runId, timeoutMs: 5_000 })).toMatchObject({ status: "aborted" });
    const { sessions } = await client.call<{ sessions: Array<{ abortedLastRun?: boolean }> }>("sessions.list", {});
    expect(sessions[0]?.abortedLastRun).toBe(true);
  });

  it("patches a session's send policy and keeps it across sessions.reset, with a new sessionId", async () => {
    const gw = await start();
    const client = await gw.client();
    const patched = await client.call<{ entry: { sessionId: string; sendPolicy?: string } }>("sessions.patch", {
      key: "agent:main:telegram:dm:7",
      sendPolicy: "deny",
      label: "seven",
    });
    expect(patched.entry.sendPolicy).toBe("deny");
    const reset = await client.call<{ entry: { sessionId: string; sendPolicy?: string; label?: string } }>(
      "sessions.reset",
      { key: "agent:main:telegram:dm:7" },
    );
    expect(reset.entry).toMatchObject({ sendPolicy: "deny", label: "seven" });
    expect(reset.entry.sessionId).not.toBe(patched.entry.sessionId);
    expect(await client.call("sessions.resolve", { label: "seven" })).toEqual({
      ok: true,
      key: "agent:main:telegram:dm:7",
    });
    const cleared = await client.call<{ entry: { sendPolicy?: string } }>("sessions.patch", {
      key: "agent:main:telegram:dm:7",
      sendPolicy: null,
    });
    expect(cleared.entry.sendPolicy).toBeUndefined();
    await expect(
      client.call("sessions.patch", { key: "agent:main:telegram:dm:7", sendPolicy: "maybe" }),
    ).rejects.toMatchObject({ code: "INVALID_REQUEST" });
  });
});

describe("gateway protocol", () => {
  it("refuses to bind beyond loopback without a token", async () => {
    const home = await tempHome();
    const { config } = parseConfig({ gateway: { bind: "0.0.0.0" } });
    await expect(
      startGateway({
        config,
        home,
        homeDir: home,
        logger: createMemoryLogger(),
        port: 0,
        resolveModel: () => {
          throw new Error("unused");
        },
      }),
    ).rejects.toThrow(/set gateway\.auth\.token/);
  });

  it("serves the control UI at / with its modules and vendored libraries, and nothing else from disk", async () => {
    const gw = await start();
    const base = gw.gateway.url.replace(/^ws/, "http");
    const page = await fetch(`${base}/`);
    expect(page.headers.get("content-type")).toContain("text/html");
    // No inline script may run: model output that slipped past the sanitizer would stay inert.
    expect(page.headers.get("content-security-policy")).toContain("script-src 'self';");
    expect(page.headers.get("content-security-policy")).not.toContain("unsafe-inline");
    expect(await page.text()).toContain('<script type="module" src="/ui/app.js">');
    for (const asset of ["/ui/app.js", "/ui/render.js", "/ui/vendor/marked.js", "/ui/vendor/purify.js"]) {
      const res = await fetch(`${base}${asset}`);
      expect([asset, res.status, res.headers.get("content-type")]).toEqual([
        asset,
        200,
        "text/javascript; charset=utf-8",
      ]);
    }
    for (const outside of [
      "/ui/../package.json",
      "/ui/%2e%2e/package.json",
      "/ui/vendor/marked.esm.js.map",
      "/web/app.js",
    ])
      expect((await fetch(`${base}${outside}`)).status).toBe(404);
  });

  it("refuses a second gateway on the same home, naming the one that runs", async () => {
    const gw = await start();
    await expect(startTestGateway({ home: gw.home })).rejects.toThrow(
      new RegExp(`another gateway \\(pid ${process.pid}`),
    );
  });

  it("answers bad params and unknown methods with {code, message}", async () => {
    const client = await (await start()).client();
    await expect(client.call("agent.wait", { runId: 5 })).rejects.toMatchObject({
      code: "INVALID_REQUEST",
      message: expect.stringContaining("invalid agent.wait params: runId"),
    });
    await expect(client.call("sessions.list", { limit: 0, bogus: true })).rejects.toMatchObject({
      code: "INVALID_REQUEST",
    });
    await expect(client.call("nope")).rejects.toMatchObject({ code: "METHOD_NOT_FOUND" });
    await expect(client.call("chat.history", { sessionKey: "   " })).rejects.toBeInstanceOf(GatewayCallError);
  });

  it("refuses a client with a wrong or missing token, and accepts the right one", async () => {
    const gw = await start({ token: "s3cret-token-0123456789" });
    await expect(gw.client("wrong-token")).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    await expect(gw.client("")).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    const ok = await gw.client("s3cret-token-0123456789");
    expect(await ok.call("agents.list")).toEqual({
      agents: [{ id: "main", name: "main", default: true, model: "offline/echo" }],
    });
  });

  it("serves /healthz and guards POST /tools/invoke with the bearer token", async () => {
    const gw = await start({ token: "s3cret-token-0123456789" });
    const base = gw.gateway.url.replace(/^ws/, "http");
    expect(await (await fetch(`${base}/healthz`)).json()).toEqual({ ok: true });
    const invoke = (auth?: string, body = '{"tool":"nope","args":{}}') =>
      fetch(`${base}/tools/invoke`, {
        method: "POST",
        body,
        headers: { "content-type": "application/json", ...(auth && { authorization: `Bearer ${auth}` }) },
      });
    expect((await invoke()).status).toBe(401);
    expect((await invoke("wrong")).status).toBe(401);
    expect((await invoke("s3cret-token-0123456789", "not json")).status).toBe(400);
    expect((await invoke("s3cret-token-0123456789")).status).toBe(404);
  });

  it("deletes a session with its transcript but refuses the main session", async () => {
    const gw = await start();
    const client = await gw.client();
    const { runId } = await client.call<{ runId: string }>("chat.send", {
      sessionKey: "agent:main:webchat:dm:x",
      message: "hi",
    });
    await client.call("agent.wait", { runId });
    await expect(client.call("sessions.delete", { key: "main" })).rejects.toMatchObject({
      code: "INVALID_REQUEST",
      message: expect.stringContaining("Cannot delete the main session"),
    });
    expect(await client.call("sessions.delete", { key: "agent:main:webchat:dm:x" })).toMatchObject({
      ok: true,
      deleted: true,
    });
    const files = await readdir(path.join(gw.home, "agents", "main", "sessions"));
    expect(files.some((f) => f.includes(".jsonl.deleted."))).toBe(true);
  });
});
