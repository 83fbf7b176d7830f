// A WhatsApp message that reaches a stopping gateway (docs/whatsapp.md "Messages that reach a
// stopping core"): baileys acknowledges a message to WhatsApp on its own, so one the core refused
// would never come again. During the stop's drain the sink stores it without handling it (read
// receipt sent), and the next start replays it: answered once.
import { afterEach, describe, expect, it } from "vitest";
import { CHANNELS, createConfiguredAdapters } from "../../../adapters/index.js";
import { createWhatsAppChannel } from "../../../adapters/whatsapp/channel.js";
import { defaultAuthDir } from "../../../adapters/whatsapp/index.js";
import { parseConfig } from "../../../src/config/index.js";
import { createFakeWhatsApp, linkDevice, waMessage } from "../../fakes/fake-whatsapp.js";
import { startTestGateway, tempHome } from "../../support/test-gateway.js";
import { ADA, ADA_JID } from "./whatsapp-harness.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const RAW = { channels: { whatsapp: { owners: [ADA] } } };

/** A real gateway on `home` with the WhatsApp adapter on `fake`, its socket open. */
async function whatsappGateway(home: string, fake: ReturnType<typeof createFakeWhatsApp>) {
  const table = CHANNELS.map((c) => (c.id === "whatsapp" ? createWhatsAppChannel({ socketFactory: fake.factory }) : c));
  const adapters = await createConfiguredAdapters(
    parseConfig(RAW, "config", table).config,
    { home, env: {}, logger: { debug() {}, info() {}, warn() {}, error() {} } },
    table,
  );
  const gw = await startTestGateway({ home, config: RAW, adapters });
  const whatsapp = adapters.find((adapter) => adapter.id === "whatsapp")!;
  await expect.poll(() => whatsapp.accountHealth?.("default")?.connected).toBe(true);
  return gw;
}

/** The fake's sends wait for `release()` (a reply still going out keeps the stop's drain open). */
function heldSends(fake: ReturnType<typeof createFakeWhatsApp>) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const factory = fake.factory;
  fake.factory = (options) => {
    const socket = factory(options);
    const send = socket.sendMessage.bind(socket) as (...args: unknown[]) => Promise<unknown>;
    const held = async (...args: unknown[]) => {
      await released;
      return send(...args);
    };
    Object.assign(socket, { sendMessage: held });
    return socket;
  };
  return release;
}

const dm = (id: string, text: string) =>
  waMessage({ key: { remoteJid: ADA_JID, id }, message: { conversation: text } });

describe("a WhatsApp message reaching a stopping gateway", () => {
  it("is stored during the stop's drain (its read receipt sent) and answered once by the next start", async () => {
    const home = await tempHome();
    await linkDevice(defaultAuthDir(home, "default"));
    const first = createFakeWhatsApp();
    const release = heldSends(first);
    const gw = await whatsappGateway(home, first);
    first.deliver([dm("IN-1", "before the stop")]);
    await expect.poll(() => first.reads.map((k) => k.id)).toEqual(["IN-1"]);
    // Its reply is held on the socket: the stop drains it, the socket still open.
    const closed = gw.close();
    await expect.poll(() => gw.gateway.core.health().phase).toBe("draining");
    first.deliver([dm("IN-2", "during the drain")]);
    await expect.poll(() => first.reads.map((k) => k.id)).toEqual(["IN-1", "IN-2"]);
    release();
    await closed;
    expect(first.sent.map((s) => s.text)).toEqual(["Echo: before the stop"]);

    const second = createFakeWhatsApp();
    const next = await whatsappGateway(home, second);
    cleanups.push(next.close);
    await expect.poll(() => second.sent.map((s) => s.text), { timeout: 10_000 }).toEqual(["Echo: during the drain"]);
    await next.gateway.core.idle();
    expect(second.sent.map((s) => s.text)).toEqual(["Echo: during the drain"]);
  });
});
