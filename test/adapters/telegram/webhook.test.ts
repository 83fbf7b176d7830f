import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { startTelegramHarness } from "./telegram-harness.js";

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** The adapter in webhook mode, mounted on a loopback HTTP server the way the gateway would. */
async function webhookSetup(beforeReceive?: () => Promise<void>, beforeInbound?: () => Promise<void>) {
  const h = await startTelegramHarness({
    config: { webhookUrl: "https://bot.example.com/telegram-webhook", webhookSecret: "s3cret_Token" },
    ...(beforeReceive && { beforeReceive }),
    ...(beforeInbound && { beforeInbound }),
  });
  closers.push(h.close);
  const server = http.createServer(async (req, res) => {
    if (!(await h.adapter.handleHttp(req, res))) res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(() => new Promise((resolve) => server.close(() => resolve())));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const post = (path: string, body: unknown, secret?: string) =>
    fetch(`${base}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(secret && { "x-telegram-bot-api-secret-token": secret }) },
      body: JSON.stringify(body),
    });
  return { h, base, post };
}

const update = {
  update_id: 5,
  message: {
    message_id: 9,
    date: 1767225600,
    chat: { id: 111, type: "private", first_name: "Ada" },
    from: { id: 111, is_bot: false, first_name: "Ada" },
    text: "via webhook",
  },
};

describe("createTelegramAdapter webhook mode", () => {
  it("sets the webhook with its secret and does not poll", async () => {
    const { h } = await webhookSetup();
    await h.fake.waitFor("setWebhook");
    expect(h.fake.callsTo("setWebhook")[0]!.body).toEqual({
      url: "https://bot.example.com/telegram-webhook",
      secret_token: "s3cret_Token",
      allowed_updates: ["message"],
    });
    expect(h.fake.callsTo("getUpdates")).toEqual([]);
  });

  it("on a cluster owner, stores a posted update only after the hand-off drain it awaits: what a standby stored earlier comes first", async () => {
    const order: string[] = [];
    let drained!: () => void;
    const drain = new Promise<void>((resolve) => {
      drained = resolve;
    });
    const { h, post } = await webhookSetup(
      async () => {
        order.push("stored");
      },
      async () => {
        order.push("drain asked");
        await drain;
      },
    );
    const answered = post("/telegram-webhook", update, "s3cret_Token");
    await expect.poll(() => order).toEqual(["drain asked"]);
    expect(h.received).toEqual([]);
    order.push("earlier hand-offs stored");
    drained();
    expect((await answered).status).toBe(200);
    expect(order).toEqual(["drain asked", "earlier hand-offs stored", "stored"]);
    expect(h.received.map((m) => m.text)).toEqual(["via webhook"]);
  });

  it("on a cluster owner, refuses a wrong or missing secret (401) before it asks for the hand-off drain: an unauthenticated POST starts no pass", async () => {
    let asked = 0;
    const { h, post } = await webhookSetup(undefined, async () => {
      asked++;
    });
    expect((await post("/telegram-webhook", update, "wrong")).status).toBe(401);
    expect((await post("/telegram-webhook", update)).status).toBe(401);
    expect(asked).toBe(0);
    expect((await post("/telegram-webhook", update, "s3cret_Token")).status).toBe(200);
    expect(asked).toBe(1);
    expect(h.received.map((m) => m.text)).toEqual(["via webhook"]);
  });

  it("hands a posted update with the right secret to the core", async () => {
    const { h, post } = await webhookSetup();
    const response = await post("/telegram-webhook", update, "s3cret_Token");
    expect(response.status).toBe(200);
    expect(h.received.map((m) => [m.chat.id, m.text])).toEqual([["111", "via webhook"]]);
  });

  it("refuses a wrong or missing secret, other methods, and leaves other paths alone", async () => {
    const { h, base, post } = await webhookSetup();
    expect((await post("/telegram-webhook", update, "wrong")).status).toBe(401);
    expect((await post("/telegram-webhook", update)).status).toBe(401);
    expect((await fetch(`${base}/telegram-webhook`)).status).toBe(405);
    expect((await post("/elsewhere", update, "s3cret_Token")).status).toBe(404);
    expect(h.received).toEqual([]);
  });

  it("answers 503 (so Telegram resends) when the core could not store the update, and 200 for the resend once it can", async () => {
    let refusals = 1;
    const { h, post } = await webhookSetup(async () => {
      if (refusals-- > 0) throw new Error("disk full");
    });
    expect((await post("/telegram-webhook", update, "s3cret_Token")).status).toBe(503);
    expect(h.received).toEqual([]);
    expect((await post("/telegram-webhook", update, "s3cret_Token")).status).toBe(200);
    expect(h.received.map((m) => m.text)).toEqual(["via webhook"]);
  });

  it("answers 400 to a body that is not JSON and keeps serving", async () => {
    const { h, base, post } = await webhookSetup();
    const bad = await fetch(`${base}/telegram-webhook`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-telegram-bot-api-secret-token": "s3cret_Token" },
      body: "{not json",
    });
    expect(bad.status).toBe(400);
    expect((await post("/telegram-webhook", update, "s3cret_Token")).status).toBe(200);
    expect(h.received).toHaveLength(1);
  });

  it.each([
    ["an array", []],
    ["an empty object", {}],
    ["a number", 1],
    ["an object without update_id", { foo: 1 }],
    ["a string update_id", { update_id: "x" }],
    ["a negative update_id", { update_id: -1, message: update.message }],
  ])("answers 400 to %s (not an update), stores nothing and keeps serving", async (_name, body) => {
    const { h, post } = await webhookSetup();
    expect((await post("/telegram-webhook", body, "s3cret_Token")).status).toBe(400);
    expect(h.received).toEqual([]);
    expect((await post("/telegram-webhook", update, "s3cret_Token")).status).toBe(200);
    expect(h.received.map((m) => m.text)).toEqual(["via webhook"]);
  });
});
