import { readdir } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { readAccountStatus } from "../../../adapters/whatsapp/index.js";
import { DeliveryError } from "../../../src/index.js";
import { waMessage } from "../../fakes/fake-whatsapp.js";
import { createManualClock } from "../../fakes/manual-clock.js";
import { ADA, ADA_JID, GROUP, useWhatsAppHarness } from "./whatsapp-harness.js";

const harness = useWhatsAppHarness();

const fromAda = (text: string, id?: string) =>
  waMessage({ key: { remoteJid: ADA_JID, ...(id && { id }) }, message: { conversation: text }, pushName: "Ada" });

async function failureOf(promise: Promise<unknown>): Promise<DeliveryError> {
  const error = await promise.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(DeliveryError);
  return error as DeliveryError;
}

describe("createWhatsAppAdapter inbound", () => {
  it("hands a live DM to the sink and sends its read receipt after the sink stored it", async () => {
    const h = await harness();
    const message = fromAda("hello");
    h.fake.deliver([message]);
    await expect.poll(() => h.fake.reads.length).toBe(1);
    expect(h.received).toEqual([expect.objectContaining({ chat: { type: "direct", id: ADA }, text: "hello" })]);
    expect(h.fake.reads[0]).toMatchObject({ remoteJid: ADA_JID, id: message.key.id });
  });

  it("sends no read receipt when the sink could not store the message, and none at all with sendReadReceipts: false", async () => {
    const refusing = await harness({
      beforeReceive: async () => {
        throw new Error("disk full");
      },
    });
    refusing.fake.deliver([fromAda("lost?")]);
    await expect.poll(() => refusing.logger.records.some((r) => r.message.includes("not stored"))).toBe(true);
    expect(refusing.fake.reads).toEqual([]);

    const quiet = await harness({ config: { sendReadReceipts: false } });
    quiet.fake.deliver([fromAda("shh")]);
    await expect.poll(() => quiet.received.length).toBe(1);
    expect(quiet.fake.reads).toEqual([]);
  });

  it("resolves a LID DM through the socket's LID mapping and drops (and logs) one it cannot resolve", async () => {
    const h = await harness({ lids: { "77770003333@lid": "15550003333@s.whatsapp.net" } });
    h.fake.deliver([
      waMessage({ key: { remoteJid: "77770003333@lid" }, message: { conversation: "known" } }),
      waMessage({ key: { remoteJid: "77770004444@lid" }, message: { conversation: "unknown" } }),
    ]);
    await expect
      .poll(() => h.logger.records.filter((r) => r.level === "warn" && r.message === "whatsapp message dropped"))
      .toHaveLength(1);
    expect(h.received.map((m) => [m.chat.id, m.text])).toEqual([["+15550003333", "known"]]);
  });

  it("names a group by its subject and never answers history, status updates or its own sends", async () => {
    const h = await harness();
    h.fake.deliver([fromAda("old")], "append");
    h.fake.deliver([
      waMessage({ key: { remoteJid: "status@broadcast", participant: ADA_JID }, message: { conversation: "story" } }),
    ]);
    await h.adapter.send({ channel: "whatsapp", to: ADA }, { text: "from the bot" });
    h.fake.deliver([
      waMessage({
        key: { remoteJid: GROUP, participant: ADA_JID },
        message: { conversation: "in the group" },
        pushName: "Ada",
      }),
    ]);
    await expect.poll(() => h.received.length).toBe(1);
    expect(h.received[0]).toMatchObject({
      chat: { type: "group", id: GROUP, title: "Family Chat" },
      sender: { id: ADA, name: "Ada" },
      wasMentioned: false,
    });
  });

  it("skips a malformed message without losing the ones after it", async () => {
    const h = await harness();
    h.fake.deliver([{ key: {} } as never, fromAda("after the bad one")]);
    await expect.poll(() => h.received.map((m) => m.text)).toEqual(["after the bad one"]);
  });

  it("answers the owner's self-chat in selfChatMode without read receipts and never its own replies", async () => {
    const h = await harness({ config: { selfChatMode: true } });
    const selfJid = "15550001111@s.whatsapp.net";
    h.fake.deliver([
      waMessage({ key: { remoteJid: selfJid, fromMe: true }, message: { conversation: "note to self" } }),
    ]);
    await expect.poll(() => h.received.length).toBe(1);
    await h.adapter.send({ channel: "whatsapp", to: "+15550001111" }, { text: "Echo: note to self" });
    const echo = h.fake.sent[0]!;
    h.fake.deliver([
      waMessage({ key: { remoteJid: selfJid, fromMe: true, id: echo.id }, message: { conversation: echo.text } }),
    ]);
    h.fake.deliver([fromAda("marker")]);
    await expect.poll(() => h.received.length).toBe(2);
    expect(h.received.map((m) => [m.chat.id, m.text])).toEqual([
      ["+15550001111", "note to self"],
      [ADA, "marker"],
    ]);
    expect(h.fake.reads.map((k) => k.remoteJid)).toEqual([ADA_JID]);
  });

  it("delivers events in order across upserts", async () => {
    const h = await harness();
    for (let i = 0; i < 5; i++) h.fake.deliver([fromAda(`m${i}`)]);
    await expect.poll(() => h.received.length).toBe(5);
    expect(h.received.map((m) => m.text)).toEqual(["m0", "m1", "m2", "m3", "m4"]);
  });
});

describe("createWhatsAppAdapter send", () => {
  it("sends WhatsApp formatting and quotes the answered message on the first piece only", async () => {
    const h = await harness();
    const question = fromAda("question", "Q1");
    h.fake.deliver([question]);
    await expect.poll(() => h.received.length).toBe(1);
    const target = { channel: "whatsapp", to: ADA };
    await h.adapter.send(target, { text: "**Done**: ~~old~~", replyToMessageId: "Q1", part: { index: 0, count: 2 } });
    await h.adapter.send(target, { text: "second", replyToMessageId: "Q1", part: { index: 1, count: 2 } });
    expect(h.fake.sent.map(({ jid, text, quotedId }) => ({ jid, text, quotedId }))).toEqual([
      { jid: ADA_JID, text: "*Done*: ~old~", quotedId: "Q1" },
      { jid: ADA_JID, text: "second", quotedId: undefined },
    ]);
  });

  it("does not quote with replyToMode off and quotes every piece with all", async () => {
    const off = await harness({ config: { replyToMode: "off" } });
    await off.adapter.send({ channel: "whatsapp", to: ADA }, { text: "a", replyToMessageId: "Q1" });
    expect(off.fake.sent[0]?.quotedId).toBeUndefined();
    const all = await harness({ config: { replyToMode: "all" } });
    await all.adapter.send(
      { channel: "whatsapp", to: ADA },
      { text: "b", replyToMessageId: "Q1", part: { index: 1, count: 2 } },
    );
    expect(all.fake.sent[0]?.quotedId).toBe("Q1");
  });

  it("sends to a group JID and refuses a target that is neither a number nor a group", async () => {
    const h = await harness();
    await h.adapter.send({ channel: "whatsapp", to: GROUP }, { text: "hi all" });
    expect(h.fake.sent[0]?.jid).toBe(GROUP);
    const error = await failureOf(h.adapter.send({ channel: "whatsapp", to: "ada" }, { text: "x" }));
    expect(error).toMatchObject({ retryable: false, reason: "bad_target" });
    expect(error.message).toContain("whatsapp:+15551234567");
  });

  it("reports a number without WhatsApp as final", async () => {
    const h = await harness({ notOnWhatsApp: ["+15550000000"] });
    const error = await failureOf(h.adapter.send({ channel: "whatsapp", to: "+15550000000" }, { text: "x" }));
    expect(error).toMatchObject({ retryable: false, reason: "chat_not_found" });
    expect(error.message).toContain("+15550000000 is not on WhatsApp");
    expect(h.fake.sent).toEqual([]);
  });

  it("shows composing while a run lasts", async () => {
    const h = await harness();
    await h.adapter.typing({ channel: "whatsapp", to: GROUP });
    expect(h.fake.presences).toEqual([{ type: "composing", jid: GROUP }]);
  });
});

describe("createWhatsAppAdapter connection", () => {
  it("reconnects after a close and sends on the new socket", async () => {
    const h = await harness();
    await expect.poll(() => h.adapter.accounts()[0]?.connected).toBe(true);
    h.fake.close(428);
    await expect.poll(() => h.fake.sockets.length).toBe(2);
    await expect.poll(() => h.adapter.accounts()[0]?.connected).toBe(true);
    await h.adapter.send({ channel: "whatsapp", to: ADA }, { text: "back" });
    expect(h.fake.sent).toEqual([expect.objectContaining({ text: "back", socket: 1 })]);
  });

  it("treats a socket that cannot even be created as a failed connection: it backs off and connects again", async () => {
    const h = await harness();
    await expect.poll(() => h.adapter.accounts()[0]?.connected).toBe(true);
    h.fake.failNextCreates(2);
    h.fake.close(428);
    await expect.poll(() => h.fake.createAttempts(), { timeout: 20_000 }).toBe(4);
    await expect.poll(() => h.adapter.accounts()[0]?.connected, { timeout: 20_000 }).toBe(true);
    expect(h.fake.sockets).toHaveLength(2);
  }, 30_000);

  it("reports a send while the socket stays closed as retryable", async () => {
    const h = await harness({ autoOpen: false });
    const error = await failureOf(h.adapter.send({ channel: "whatsapp", to: ADA }, { text: "x" }));
    expect(error).toMatchObject({ retryable: true, reason: "not_connected" });
  });

  it("stops for good on loggedOut (401) with the relink message, and sends then fail as final", async () => {
    const clock = createManualClock();
    const h = await harness({ timers: clock.timers });
    await expect.poll(() => h.adapter.accounts()[0]?.connected).toBe(true);
    h.fake.close(401, "Connection Failure");
    await expect.poll(() => h.adapter.accounts()[0]?.lastError).toContain("channels login whatsapp");
    expect(clock.nextTimerAt()).toBeUndefined(); // no reconnect set
    clock.advance(60_000); // far past every backoff period: no new socket
    expect(h.fake.sockets).toHaveLength(1);
    const error = await failureOf(h.adapter.send({ channel: "whatsapp", to: ADA }, { text: "x" }));
    expect(error).toMatchObject({ retryable: false, reason: "not_linked" });
    expect(h.logger.records.filter((r) => r.level === "error").map((r) => r.message)).toEqual([
      expect.stringContaining("switchboard channels login whatsapp"),
    ]);
    await expect
      .poll(() => readAccountStatus(h.context.state.rows("default")))
      .toMatchObject({
        connected: false,
        lastError: expect.stringContaining("logged this device out"),
      });
  });

  it("starts without connecting when the account was never linked, and says how to link it", async () => {
    const h = await harness({ linked: false });
    expect(h.fake.sockets).toHaveLength(0);
    expect(h.adapter.accounts()[0]).toMatchObject({
      linked: false,
      connected: false,
      lastError: expect.stringContaining("channels login whatsapp"),
    });
    // Nothing is written in a folder of the account's own: its state is rows of the channel state.
    expect(await readdir(h.home)).not.toContain("channels");
  });

  it("saves refreshed credentials and records when", async () => {
    const h = await harness();
    await expect.poll(() => h.adapter.accounts()[0]?.connected).toBe(true);
    const before = h.context.state.rows("default").savedAt("creds")!;
    // A later millisecond than the import's save, so the new save is seen to be newer.
    await expect.poll(() => Date.now()).toBeGreaterThan(before);
    h.fake.current().ev.emit("creds.update", {});
    await expect.poll(() => h.adapter.accounts()[0]?.credentialsSavedAt ?? 0).toBeGreaterThan(before);
  });
});
