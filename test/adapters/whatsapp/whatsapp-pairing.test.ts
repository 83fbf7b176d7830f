// DM pairing on WhatsApp: the messages WhatsApp hands over at connect that were sent more than 30 s
// before it (offline messages) earn a stranger no pairing code; a live message does. The mapping, the
// adapter on the fake socket, and the real gateway with the adapter on the fake socket.
import { afterEach, describe, expect, it } from "vitest";
import { CHANNELS, createConfiguredAdapters } from "../../../adapters/index.js";
import { createWhatsAppChannel } from "../../../adapters/whatsapp/channel.js";
import { type InboundContext, defaultAuthDir, mapUpsert } from "../../../adapters/whatsapp/index.js";
import { parseConfig } from "../../../src/config/index.js";
import { createFakeWhatsApp, linkDevice, waMessage } from "../../fakes/fake-whatsapp.js";
import { startTestGateway, tempHome } from "../../support/test-gateway.js";
import { ADA, ADA_JID, useWhatsAppHarness } from "./whatsapp-harness.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const BOB = "+15550002222";
const BOB_JID = "15550002222@s.whatsapp.net";
/** A DM sent `agoMs` before now (WhatsApp's timestamps are whole seconds). */
const dmAt = (jid: string, text: string, agoMs: number) =>
  waMessage({
    key: { remoteJid: jid },
    message: { conversation: text },
    messageTimestamp: Math.floor((Date.now() - agoMs) / 1000),
  });

describe("WhatsApp messages sent before the connection opened", () => {
  it("are marked beforeConnect only when more than 30 s older than the connection", () => {
    const connectedAt = 1_767_225_600_000;
    const context: InboundContext = { accountId: "default", self: { pn: "15550001111@s.whatsapp.net" }, connectedAt };
    const at = (ms: number) =>
      mapUpsert(
        {
          type: "notify",
          message: waMessage({
            key: { remoteJid: BOB_JID },
            message: { conversation: "hi" },
            messageTimestamp: ms / 1000,
          }),
        },
        context,
      );
    const marked = (ms: number) =>
      ("message" in at(ms) ? at(ms) : undefined) as { message: { beforeConnect?: boolean } };
    expect(marked(connectedAt - 31_000).message.beforeConnect).toBe(true);
    expect(marked(connectedAt - 30_000).message.beforeConnect).toBeUndefined();
    expect(marked(connectedAt + 5_000).message.beforeConnect).toBeUndefined();
    // Before the first open nothing is marked: there is no connect time to compare with.
    const { connectedAt: _, ...unopened } = context;
    const first = mapUpsert({ type: "notify", message: dmAt(BOB_JID, "hi", 3_600_000) }, unopened) as {
      message: { beforeConnect?: boolean };
    };
    expect(first.message.beforeConnect).toBeUndefined();
  });

  const harness = useWhatsAppHarness();

  it("are marked by the adapter against the time its socket opened", async () => {
    const h = await harness({ autoOpen: false });
    await expect.poll(() => h.fake.sockets.length).toBe(1);
    h.fake.open();
    h.fake.deliver([dmAt(BOB_JID, "sent an hour ago", 3_600_000), dmAt(BOB_JID, "sent just now", 0)]);
    await expect.poll(() => h.received.length).toBe(2);
    expect(h.received.map((m) => [m.text, m.beforeConnect])).toEqual([
      ["sent an hour ago", true],
      ["sent just now", undefined],
    ]);
  });
});

/** A real gateway with the WhatsApp adapter on the fake socket: owner Ada, DMs under dmPolicy "pairing". */
async function pairingGateway() {
  const home = await tempHome();
  await linkDevice(defaultAuthDir(home, "default"));
  const fake = createFakeWhatsApp();
  const raw = { channels: { whatsapp: { owners: [ADA], dmPolicy: "pairing" } } };
  const table = CHANNELS.map((c) => (c.id === "whatsapp" ? createWhatsAppChannel({ socketFactory: fake.factory }) : c));
  const adapters = await createConfiguredAdapters(
    parseConfig(raw, "config", table).config,
    { home, env: {}, logger: { debug() {}, info() {}, warn() {}, error() {} } },
    table,
  );
  const gw = await startTestGateway({ home, config: raw, adapters });
  cleanups.push(gw.close);
  await expect.poll(() => fake.sockets.length).toBe(1);
  // What WhatsApp hands over is dated against the moment the socket opened: wait for it.
  const whatsapp = adapters.find((adapter) => adapter.id === "whatsapp")!;
  await expect.poll(() => whatsapp.accountHealth?.("default")?.connected).toBe(true);
  return { gw, fake };
}

describe("WhatsApp pairing through the gateway", () => {
  it("gives no code for a stranger's offline messages, answers the owner's, and gives a code at the stranger's live message", async () => {
    const { gw, fake } = await pairingGateway();
    const sentTo = (jid: string) => fake.sent.filter((s) => s.jid === jid).map((s) => s.text);
    const beforeConnect = () =>
      gw.logger.records.filter(
        (r) => r.message === "pairing: no code given" && (r.fields as { status?: string }).status === "before-connect",
      ).length;
    // What WhatsApp hands over at connect: two of Bob's messages from the night, and one of Ada's.
    fake.deliver([dmAt(BOB_JID, "are you there?", 8 * 3_600_000), dmAt(BOB_JID, "hello??", 7 * 3_600_000)]);
    fake.deliver([dmAt(ADA_JID, "good morning", 3_600_000)]);
    await expect.poll(() => sentTo(ADA_JID), { timeout: 10_000 }).toEqual(["Echo: good morning"]);
    await expect.poll(beforeConnect, { timeout: 10_000 }).toBe(2);
    expect(sentTo(BOB_JID)).toEqual([]);
    const client = await gw.client();
    // No code waits: the offline messages took none of the account's pending slots.
    expect((await client.call<{ pending: unknown[] }>("pairing.list", {})).pending).toEqual([]);

    fake.deliver([dmAt(BOB_JID, "hi, it's Bob", 0)]);
    await expect.poll(() => sentTo(BOB_JID).length, { timeout: 10_000 }).toBe(1);
    expect(sentTo(BOB_JID)[0]).toMatch(/Pairing code: [A-Z0-9]{8}/);
    expect((await client.call<{ pending: Array<{ senderId: string }> }>("pairing.list", {})).pending).toMatchObject([
      { senderId: BOB },
    ]);
  });
});
