import { Api, GrammyError, HttpError } from "grammy";
import { afterEach, describe, expect, it } from "vitest";
import { type BotApiClient, createBotApiClient } from "../../../adapters/telegram/bot-api-client.js";
import { describeTelegramError } from "../../../adapters/telegram/telegram-errors.js";
import { type FakeTelegramServer, TEST_BOT, startFakeTelegramServer } from "../../fakes/fake-telegram-server.js";

let fake: FakeTelegramServer | undefined;
let client: BotApiClient | undefined;
afterEach(async () => {
  await client?.close();
  await fake?.close();
});

async function startApi(): Promise<{ api: Api; fake: FakeTelegramServer }> {
  fake = await startFakeTelegramServer();
  client = createBotApiClient();
  return { api: new Api(TEST_BOT.token, { apiRoot: fake.apiRoot, fetch: client.fetch }), fake };
}

describe("the Bot API client grammy sends through", () => {
  it("carries calls and their answers: a sent message, a poll, Telegram's refusal as a GrammyError", async () => {
    const { api, fake } = await startApi();
    const sent = await api.sendMessage(42, "<b>hi</b>", { parse_mode: "HTML" });
    expect(sent.text).toBe("hi");
    expect(fake.sent).toMatchObject([{ chatId: "42", text: "hi" }]);
    fake.push({
      message: { message_id: 1, date: 1, chat: { id: 7, type: "private", first_name: "A" }, text: "yo" },
    } as never);
    expect((await api.getUpdates({ timeout: 1 })).map((u) => u.message?.text)).toEqual(["yo"]);
    fake.failNext("sendMessage", { error_code: 403, description: "Forbidden: bot was blocked by the user" });
    const refused = await api.sendMessage(42, "again").catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(GrammyError);
    expect((refused as GrammyError).error_code).toBe(403);
  });

  it("turns a dropped connection and an abort into grammy's HttpError, and its description carries no token", async () => {
    const { api, fake } = await startApi();
    fake.failNext("sendMessage", "disconnect");
    const dropped = await api.sendMessage(42, "x").catch((err: unknown) => err);
    expect(dropped).toBeInstanceOf(HttpError);
    expect(describeTelegramError(dropped)).not.toContain(TEST_BOT.token);
    const controller = new AbortController();
    const polling = api
      .getUpdates({ timeout: 30 }, controller.signal as Parameters<Api["getUpdates"]>[1])
      .catch((err: unknown) => err);
    controller.abort();
    expect(await polling).toBeInstanceOf(HttpError);
    // The next call still goes through, on a new connection.
    expect((await api.sendMessage(42, "after")).text).toBe("after");
  });

  it("leaves timing out to grammy: a call slower than timeoutSeconds fails as an HttpError", async () => {
    fake = await startFakeTelegramServer({ sendDelayMs: 5_000 });
    client = createBotApiClient();
    const api = new Api(TEST_BOT.token, { apiRoot: fake.apiRoot, fetch: client.fetch, timeoutSeconds: 1 });
    const slow = await api.sendMessage(42, "late").catch((err: unknown) => err);
    expect(slow).toBeInstanceOf(HttpError);
  });

  it("keeps its connections alive between calls, and leaves none open once closed", async () => {
    const { api, fake } = await startApi();
    for (let i = 0; i < 10; i++) await api.sendMessage(42, `n${i}`);
    // undici may open a second connection while the first is still being released; never one per call.
    expect(fake.openConnections()).toBeLessThanOrEqual(2);
    await client!.close();
    client = undefined;
    await expect.poll(() => fake.openConnections()).toBe(0);
  });
});
