// DM pairing end to end (docs/operations.md, "Pairing"): the real gateway with the real grammy bot
// against the fake Bot API. What a stranger and the owner see is what reached the fake.
import type { Update } from "grammy/types";
import { afterEach, describe, expect, it } from "vitest";
import { STRINGS } from "../../../src/commands/command-strings.js";
import { type FakeTelegramServer, startFakeTelegramServer } from "../../fakes/fake-telegram-server.js";
import { startPairingGateway } from "../../support/pairing-gateway.js";
import { type TestGateway, tempHome } from "../../support/test-gateway.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

let nextMessageId = 700;
/** A DM to the bot from user `id` (`@user<id>`). */
function dmFrom(id: number, text: string): Omit<Update, "update_id"> {
  const from = { id, is_bot: false, first_name: `User ${id}`, username: `user${id}` };
  return {
    message: { message_id: nextMessageId++, date: 1767225600, chat: { id, type: "private" }, from, text },
  } as unknown as Omit<Update, "update_id">;
}
const OWNER = 111;
const BOB = 222;

async function setup(telegram: Record<string, unknown> = {}) {
  const fake = await startFakeTelegramServer();
  cleanups.push(fake.close);
  const gw = await startPairingGateway(await tempHome(), fake, telegram);
  cleanups.push(gw.close);
  return { fake, gw };
}

const sentTo = (fake: FakeTelegramServer, chatId: number) =>
  fake.sent.filter((s) => s.chatId === String(chatId)).map((s) => s.text);
const codeIn = (text: string | undefined) => /Pairing code: ([A-Z0-9]{8})/.exec(text ?? "")?.[1];
/** How many stranger DMs the gateway has handled without giving a code (its log lines). */
const silenced = (gw: TestGateway) => gw.logger.records.filter((r) => r.message === "pairing: no code given").length;

describe("DM pairing through the gateway and Telegram", () => {
  it("gives a stranger a code instead of an answer, lets the owner approve it with /pair, tells the stranger, then answers them", async () => {
    const { fake, gw } = await setup();
    fake.push(dmFrom(BOB, "hello?"));
    await expect.poll(() => sentTo(fake, BOB).length, { timeout: 10_000 }).toBe(1);
    const code = codeIn(sentTo(fake, BOB)[0]);
    expect(code).toBeDefined();
    expect(sentTo(fake, BOB)[0]).toBe(STRINGS.pairingCode("telegram", String(BOB), code!, 60));
    // A second message while the code waits: no second code, no answer.
    fake.push(dmFrom(BOB, "anyone there?"));
    await expect.poll(() => silenced(gw), { timeout: 10_000 }).toBe(1);
    // The stranger's messages reached no agent: no session was written for them.
    const client = await gw.client();
    expect((await client.call<{ sessions: unknown[] }>("sessions.list", {})).sessions).toEqual([]);

    fake.push(dmFrom(OWNER, `/pair approve ${code}`));
    await expect
      .poll(() => sentTo(fake, OWNER), { timeout: 10_000 })
      .toEqual([STRINGS.pairDone("approved", code!, `@user${BOB} (${BOB})`)]);
    await expect.poll(() => sentTo(fake, BOB).length, { timeout: 10_000 }).toBe(2);
    expect(sentTo(fake, BOB)[1]).toBe(STRINGS.pairingApproved);
    fake.push(dmFrom(BOB, "hi again"));
    await expect.poll(() => sentTo(fake, BOB).length, { timeout: 10_000 }).toBe(3);
    expect(sentTo(fake, BOB)[2]).toBe("Echo: hi again");
  });

  it("does not let a stranger approve their own code with /pair", async () => {
    const { fake, gw } = await setup();
    fake.push(dmFrom(BOB, "hi"));
    await expect.poll(() => sentTo(fake, BOB).length, { timeout: 10_000 }).toBe(1);
    const code = codeIn(sentTo(fake, BOB)[0])!;
    fake.push(dmFrom(BOB, `/pair approve ${code}`));
    await expect.poll(() => silenced(gw), { timeout: 10_000 }).toBe(1);
    expect(sentTo(fake, BOB)).toHaveLength(1);
    const client = await gw.client();
    const list = await client.call<{ pending: Array<{ code: string }>; allowed: unknown[] }>("pairing.list", {});
    expect(list.pending.map((p) => p.code)).toEqual([code]);
    expect(list.allowed).toEqual([]);
  });

  it("gives codes to at most maxPending strangers of a flood and stays silent to the rest", async () => {
    const { fake, gw } = await setup({ pairing: { maxPending: 3 } });
    for (let i = 0; i < 20; i++) fake.push(dmFrom(5000 + i, "let me in"));
    await expect.poll(() => silenced(gw), { timeout: 15_000 }).toBe(17);
    await expect.poll(() => fake.sent.length, { timeout: 10_000 }).toBe(3);
    expect(fake.sent.every((s) => codeIn(s.text) !== undefined)).toBe(true);
  });
});
