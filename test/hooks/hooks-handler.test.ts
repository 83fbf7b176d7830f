// End to end: webhooks served by the real gateway, replies announced through the real Telegram adapter to the fake Bot API.
import type { LanguageModel } from "ai";
import { afterEach, describe, expect, it } from "vitest";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { createConfiguredAdapters } from "../../adapters/index.js";
import { HooksConfigSchema } from "../../src/config/schema/automation.js";
import { createCoreKeys } from "../../src/gateway/core-keys.js";
import { createHooksHandler } from "../../src/hooks/hooks-handler.js";
import { InboxWriteError } from "../../src/inbound/inbox.js";
import { createMemoryLogger } from "../../src/logger.js";
import { parseConfig } from "../../src/config/index.js";
import { TEST_BOT, startFakeTelegramServer } from "../fakes/fake-telegram-server.js";
import { createScriptedModel } from "../fakes/scripted-model.js";
import { type TestGateway, startTestGateway, tempHome } from "../support/test-gateway.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const TOKEN = "hook-token-0123456789";
const TEAM = { id: -1002000000001, type: "supergroup", title: "Team", is_forum: true } as const;

async function setup(
  options: { model?: LanguageModel; hooks?: Record<string, unknown>; config?: Record<string, unknown> } = {},
) {
  const fake = await startFakeTelegramServer();
  cleanups.push(fake.close);
  const home = await tempHome();
  const raw = {
    ...options.config,
    hooks: { enabled: true, token: TOKEN, ...options.hooks },
    channels: { telegram: { botToken: TEST_BOT.token, apiRoot: fake.apiRoot, allowFrom: ["111"], owners: ["111"] } },
  };
  const adapters = await createConfiguredAdapters(parseConfig(raw).config, {
    home,
    env: {},
    logger: { debug() {}, info() {}, warn() {}, error() {} },
  });
  const gw = await startTestGateway({ home, config: raw, adapters, ...(options.model && { model: options.model }) });
  cleanups.push(gw.close);
  const base = gw.gateway.url.replace(/^ws/, "http");
  /** POSTs JSON to a hook path with the hook token (unless headers say otherwise). */
  const post = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(`${base}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${TOKEN}`, ...headers },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
    return {
      status: response.status,
      headers: response.headers,
      body: (await response.json()) as {
        ok: boolean;
        runId?: string;
        sessionKey?: string;
        duplicate?: boolean;
        error?: { code: string; message: string; field?: string };
      },
    };
  };
  return { fake, gw, post, base };
}

async function sessionKeys(gw: TestGateway): Promise<string[]> {
  const client = await gw.client();
  return (await client.call<{ sessions: Array<{ key: string }> }>("sessions.list", {})).sessions.map((s) => s.key);
}

describe("POST /hooks/agent", () => {
  it("answers 202 with the runId and a hook session at once, and announces the reply into a Telegram topic", async () => {
    let finishModel = () => {};
    const modelFinished = new Promise<void>((resolve) => {
      finishModel = resolve;
    });
    const { fake, post, gw } = await setup({
      model: createScriptedModel([
        { text: "CI failed in test/login: a timeout. Retrying should fix it.", until: modelFinished },
      ]),
    });
    const { status, body } = await post("/hooks/agent", {
      message: "CI failed, look at the log",
      name: "ci",
      to: `telegram:${TEAM.id}:topic:7`,
    });
    // "At once": the answer came while the model was still working on the reply.
    expect(fake.sent).toEqual([]);
    finishModel();
    expect(status).toBe(202);
    expect(body).toEqual({
      ok: true,
      runId: expect.any(String),
      sessionKey: expect.stringMatching(/^agent:main:hook:[0-9a-f-]{36}$/),
    });
    await expect
      .poll(() => fake.sent.map((s) => ({ chatId: s.chatId, threadId: s.threadId, text: s.text })), { timeout: 10_000 })
      .toEqual([
        { chatId: String(TEAM.id), threadId: 7, text: "CI failed in test/login: a timeout. Retrying should fix it." },
      ]);
    const client = await gw.client();
    const history = await client.call<{ messages: Array<{ role: string; content: unknown }> }>("chat.history", {
      sessionKey: body.sessionKey,
    });
    expect(JSON.stringify(history.messages[0]!.content)).toContain("[ci] CI failed, look at the log");
  });

  it('delivers nothing under a keyPrefix "hook:" deny rule, and refuses a GET with 405', async () => {
    const { fake, post, gw, base } = await setup({
      config: { session: { sendPolicy: { rules: [{ action: "deny", match: { keyPrefix: "hook:" } }] } } },
    });
    const { body } = await post("/hooks/agent", { message: "quiet please", to: "telegram:111" });
    const client = await gw.client();
    await client.call("agent.wait", { runId: body.runId });
    await expect
      .poll(() => gw.logger.records.some((r) => r.message === "delivery denied by sendPolicy"), { timeout: 10_000 })
      .toBe(true);
    await gw.gateway.core.gate.idle();
    expect(fake.sent).toEqual([]);
    const get = await fetch(`${base}/hooks/agent`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(get.status).toBe(405);
    expect(await get.json()).toEqual({ ok: false, error: { code: "METHOD_NOT_ALLOWED", message: "use POST" } });
  });

  it("runs a repeated idempotencyKey once and answers with the first run", async () => {
    const { fake, post, gw } = await setup();
    const first = await post("/hooks/agent", {
      message: "deploy done",
      to: "telegram:111",
      idempotencyKey: "deploy-42",
    });
    const again = await post("/hooks/agent", {
      message: "deploy done",
      to: "telegram:111",
      idempotencyKey: "deploy-42",
    });
    expect(again.status).toBe(202);
    expect(again.body).toEqual({
      ok: true,
      runId: first.body.runId,
      sessionKey: first.body.sessionKey,
      duplicate: true,
    });
    await expect.poll(() => fake.sent.map((s) => s.text), { timeout: 10_000 }).toEqual(["Echo: deploy done"]);
    await gw.gateway.core.gate.idle();
    expect(await sessionKeys(gw)).toEqual([first.body.sessionKey]);
  });

  it("keeps the reply internal with deliver: false, and goes to the main session's last route by default", async () => {
    const { fake, post, gw } = await setup({ config: { session: { dmScope: "main" } } });
    const quiet = await post("/hooks/agent", { message: "just think", deliver: false });
    const client = await gw.client();
    await client.call("agent.wait", { runId: quiet.body.runId });
    // The owner's DM is the main session's last route (dmScope main), so `to` "last" goes there.
    fake.push({
      message: {
        message_id: 1,
        date: 1767225600,
        chat: { id: 111, type: "private", first_name: "Ada" },
        from: { id: 111, is_bot: false, first_name: "Ada" },
        text: "hi",
      },
    } as never);
    await expect.poll(() => fake.sent.length, { timeout: 10_000 }).toBe(1);
    const toDm = await post("/hooks/agent", { message: "to my DM" });
    // The run is known as soon as the 202 is sent.
    expect(await client.call("agent.wait", { runId: toDm.body.runId, timeoutMs: 10_000 })).toMatchObject({
      status: "ok",
      text: "Echo: to my DM",
    });
    await expect.poll(() => fake.sent.map((s) => s.text), { timeout: 10_000 }).toEqual(["Echo: hi", "Echo: to my DM"]);
  });

  it("uses a requested sessionKey only when hooks.allowRequestSessionKey is on", async () => {
    const refused = await setup();
    const no = await refused.post("/hooks/agent", { message: "x", sessionKey: "hook:ci-main" });
    expect(no.status).toBe(400);
    expect(no.body.error).toMatchObject({
      field: "sessionKey",
      message: expect.stringContaining("allowRequestSessionKey"),
    });
    const allowed = await setup({ hooks: { allowRequestSessionKey: true } });
    const yes = await allowed.post("/hooks/agent", { message: "x", sessionKey: "hook:ci-main", deliver: false });
    expect(yes.body.sessionKey).toBe("agent:main:hook:ci-main");
    const other = await setup({
      hooks: { allowRequestSessionKey: true },
      config: { agents: { list: [{ id: "main", default: true }, { id: "ops" }] } },
    });
    expect(
      (await other.post("/hooks/agent", { message: "x", sessionKey: "agent:ops:hook:nightly", deliver: false })).body
        .sessionKey,
    ).toBe("agent:ops:hook:nightly");
    const mismatch = await other.post("/hooks/agent", {
      message: "x",
      sessionKey: "agent:ops:hook:nightly",
      agentId: "main",
    });
    expect(mismatch.body.error).toMatchObject({
      field: "sessionKey",
      message: 'sessionKey: belongs to agent "ops", not "main"',
    });
  });

  it("refuses bad input with 400 naming the field, and runs nothing", async () => {
    const { post, gw } = await setup();
    const cases: Array<[unknown, string]> = [
      [{}, "message"],
      [{ message: "  " }, "message"],
      [{ message: "x", deliver: "yes" }, "deliver"],
      [{ message: "x", to: "nowhere" }, "to"],
      // read by the Telegram adapter's own decoder: not a chat id
      [{ message: "x", to: "telegram:not-a-chat" }, "to"],
      [{ message: "x", timeoutSeconds: 0 }, "timeoutSeconds"],
      [{ message: "x", surprise: 1 }, "body"],
      ["{not json", "body"],
    ];
    for (const [body, field] of cases) {
      const { status, body: answer } = await post("/hooks/agent", body);
      expect(status, JSON.stringify(body)).toBe(400);
      if (field !== "body") expect(answer.error!.field).toBe(field);
      expect(answer.ok).toBe(false);
    }
    expect(await sessionKeys(gw)).toEqual([]);
  });

  it("answers 401 for a missing or wrong token, 400 for a token in the URL, and 429 after repeated failures", async () => {
    const { post } = await setup();
    const missing = await post("/hooks/agent", { message: "x" }, { authorization: "" });
    expect([missing.status, missing.body.error!.code]).toEqual([401, "UNAUTHORIZED"]);
    expect(
      (await post("/hooks/agent", { message: "x" }, { authorization: "Bearer wrong-token-0123456789" })).status,
    ).toBe(401);
    expect(
      (
        await post(
          "/hooks/agent",
          { message: "x", deliver: false },
          { authorization: "", "x-switchboard-token": TOKEN },
        )
      ).status,
    ).toBe(202);
    const inUrl = await post(`/hooks/agent?token=${TOKEN}`, { message: "x" });
    expect([inUrl.status, inUrl.body.error!.code]).toEqual([400, "INVALID_REQUEST"]);
    expect(inUrl.body.error!.field).toBe("token");
    for (let i = 0; i < 5; i++) await post("/hooks/agent", { message: "x" }, { authorization: "Bearer nope" });
    const limited = await post("/hooks/agent", { message: "x" }, { authorization: "Bearer nope" });
    expect([limited.status, limited.body.error!.code]).toEqual([429, "RATE_LIMITED"]);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    // Even the right token waits out the window once the client is limited.
    expect((await post("/hooks/agent", { message: "x" })).status).toBe(429);
  });

  it("answers 404 for an unknown agent, 403 for an agent hooks may not run, and 404 for an unknown hook", async () => {
    const { post } = await setup({
      hooks: { allowedAgentIds: ["ops"] },
      config: { agents: { list: [{ id: "main", default: true }, { id: "ops" }] } },
    });
    const ghost = await post("/hooks/agent", { message: "x", agentId: "ghost" });
    expect(ghost.status).toBe(404);
    expect(ghost.body.error).toMatchObject({
      code: "NOT_FOUND",
      field: "agentId",
      message: expect.stringContaining('unknown agent "ghost"'),
    });
    const forbidden = await post("/hooks/agent", { message: "x", agentId: "main" });
    expect([forbidden.status, forbidden.body.error!.code]).toEqual([403, "FORBIDDEN"]);
    expect((await post("/hooks/agent", { message: "x", agentId: "ops", deliver: false })).status).toBe(202);
    expect((await post("/hooks/nope", { message: "x" })).status).toBe(404);
  });

  it("answers 413 for a body over maxBodyBytes and 415 for a body that is not JSON", async () => {
    const { post, base, gw } = await setup({ hooks: { maxBodyBytes: 2048 } });
    const big = await post("/hooks/agent", { message: "x".repeat(3000) });
    expect(big.status).toBe(413);
    expect(big.body.error!.code).toBe("TOO_LARGE");
    const huge = await post("/hooks/agent", { message: "x".repeat(4_000_000) });
    expect(huge.status).toBe(413);
    const form = await fetch(`${base}/hooks/agent`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "text/plain" },
      body: "message=x",
    });
    expect(form.status).toBe(415);
    expect(((await form.json()) as { error: { code: string } }).error.code).toBe("UNSUPPORTED_MEDIA_TYPE");
    expect(await sessionKeys(gw)).toEqual([]);
  });

  it("is not served when hooks are disabled", async () => {
    const { post } = await setup({ hooks: { enabled: false } });
    expect((await post("/hooks/agent", { message: "x" })).status).toBe(404);
  });
});

describe("POST /hooks/wake", () => {
  it("adds a system line to the main session and runs a turn", async () => {
    const { post, gw, fake } = await setup({
      model: createScriptedModel([{ text: "You have a new email from Bob." }]),
    });
    const { status, body } = await post("/hooks/wake", { text: "New email from bob@example.com", deliver: false });
    expect(status).toBe(202);
    expect(body.sessionKey).toBe("agent:main:main");
    const client = await gw.client();
    await client.call("agent.wait", { runId: body.runId });
    const history = await client.call<{ messages: Array<{ role: string; content: unknown }> }>("chat.history", {
      sessionKey: "main",
    });
    expect(history.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(JSON.stringify(history.messages[0]!.content)).toContain("System: New email from bob@example.com");
    expect((await post("/hooks/wake", {})).body.error!.field).toBe("text");
    expect(fake.sent).toEqual([]);
  });

  it("announces the wake turn's reply to the main session's last route", async () => {
    const { post, fake } = await setup({ config: { session: { dmScope: "main" } } });
    fake.push({
      message: {
        message_id: 1,
        date: 1767225600,
        chat: { id: 111, type: "private", first_name: "Ada" },
        from: { id: 111, is_bot: false, first_name: "Ada" },
        text: "hi",
      },
    } as never);
    await expect.poll(() => fake.sent.length, { timeout: 10_000 }).toBe(1);
    expect((await post("/hooks/wake", { text: "build 812 is green" })).status).toBe(202);
    await expect
      .poll(() => fake.sent.map((s) => ({ chatId: s.chatId, text: s.text })), { timeout: 10_000 })
      .toEqual([
        { chatId: "111", text: "Echo: hi" },
        { chatId: "111", text: "Echo: System: build 812 is green" },
      ]);
  });
});

describe("createHooksHandler", () => {
  it("answers 503 STORAGE_FAILED when the turn could not be stored in the inbox, so the caller sends it again", async () => {
    const keys = createCoreKeys(parseConfig({}).config);
    const handler = createHooksHandler({
      config: HooksConfigSchema.parse({ enabled: true, token: TOKEN }),
      ...keys,
      resolveModelRef: (ref) => ref,
      startTurn: async () => {
        throw new InboxWriteError(new Error("ENOSPC: no space left on device"));
      },
      logger: createMemoryLogger(),
      now: Date.now,
    });
    const server = http.createServer((req, res) => {
      void handler.handle(req, res, new URL(req.url!, "http://localhost"));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/agent`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${TOKEN}` },
      body: JSON.stringify({ message: "deploy done", idempotencyKey: "deploy-9" }),
    });
    expect(response.status).toBe(503);
    expect(await response.json()).toEqual({
      ok: false,
      error: {
        code: "STORAGE_FAILED",
        message: expect.stringContaining("ENOSPC: no space left on device; nothing runs, send it again"),
      },
    });
  });
});
