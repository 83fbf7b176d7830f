// The global holder's side of WhatsApp in cluster.owners many: while its adapter receives, it
// answers the partition cores' `whatsapp.send` and `whatsapp.typing` on the account's socket (the
// fake WhatsApp, sockets on baileys' own event emitter). A send-only adapter calls it here in
// process, each call's params and answer passed through JSON as over the peer call.
import { mkdtemp } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createWhatsAppAdapter, defaultAuthDir } from "../../../adapters/whatsapp/index.js";
import { WhatsAppConfigSchema } from "../../../adapters/whatsapp/whatsapp-config.js";
import { type AdapterStartContext, DeliveryError, SwitchboardError } from "../../../src/index.js";
import { createMemoryLogger } from "../../../src/logger.js";
import { type FakeWhatsAppOptions, createFakeWhatsApp, linkDevice } from "../../fakes/fake-whatsapp.js";
import { testStartContext } from "../../support/channel-context.js";
import { closedAfterEach } from "../../support/closed-after-each.js";
import { until } from "../../support/gateway-child.js";

const ADA = { channel: "whatsapp", to: "+15550009999" };
const ADA_JID = "15550009999@s.whatsapp.net";

/** A receiving holder on the fake WhatsApp, its peer handlers in a map, and a send-only adapter calling them. */
async function holderAndPartition(options: FakeWhatsAppOptions = {}) {
  const home = await mkdtemp(path.join(os.tmpdir(), "sb-wa-"));
  await linkDevice(defaultAuthDir(home, "default"));
  const fake = createFakeWhatsApp(options);
  const handlers = new Map<string, (params: unknown) => Promise<unknown>>();
  const make = () =>
    createWhatsAppAdapter(WhatsAppConfigSchema.parse({ replyToMode: "first" }), {
      home,
      logger: createMemoryLogger(),
      socketFactory: fake.factory,
      sendWaitMs: 5_000,
    });
  const holder = make();
  const context: AdapterStartContext = {
    ...(await testStartContext("whatsapp", home)),
    servePeers: (name, handler) => {
      handlers.set(name, handler);
      return () => handlers.delete(name);
    },
  };
  await holder.start(async () => undefined, context);
  const callHolder = async (name: string, params: unknown) => {
    const handler = handlers.get(name);
    if (!handler) throw new SwitchboardError("NOT_FOUND", `no peer handler "${name}"`);
    return JSON.parse(JSON.stringify(await handler(JSON.parse(JSON.stringify(params)))));
  };
  const partition = make();
  await partition.start(async () => undefined, { state: context.state, receive: false, callHolder });
  return {
    fake,
    holder,
    partition,
    handlers,
    async close() {
      await partition.stop();
      await holder.stop();
    },
  };
}

const started = closedAfterEach(holderAndPartition);

describe("the WhatsApp holder answering a partition core's sends (cluster.owners many)", () => {
  it("sends the pieces on its socket, quoting as its own send does, and answers their message ids; typing too", async () => {
    const { fake, holder, partition } = await started();
    await until(() => holder.accountHealth?.("default")?.connected === true, 5_000);
    const parts = (index: number) => ({ index, count: 2 });
    const one = await partition.send(ADA, { text: "**one**", replyToMessageId: "IN9", part: parts(0) });
    const two = await partition.send(ADA, { text: "two", replyToMessageId: "IN9", part: parts(1) });
    await partition.typing?.(ADA);
    expect(fake.sent.map(({ jid, text, quotedId, id }) => ({ jid, text, quotedId, id }))).toEqual([
      { jid: ADA_JID, text: "*one*", quotedId: "IN9", id: one.messageIds[0] },
      { jid: ADA_JID, text: "two", quotedId: undefined, id: two.messageIds[0] },
    ]);
    expect(fake.presences).toContainEqual({ type: "composing", jid: ADA_JID });
  });

  it("refuses UNAVAILABLE while its socket is not open, so the partition's piece stays pending; sends it once the socket opens", async () => {
    const { fake, partition } = await started({ autoOpen: false });
    await until(() => fake.sockets.length > 0, 5_000);
    const refused = await partition.send(ADA, { text: "early" }).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(DeliveryError);
    expect(refused).toMatchObject({ retryable: true, reason: "not_connected" });
    expect(fake.sent).toEqual([]);
    fake.open();
    await until(async () => (await partition.send(ADA, { text: "early" }).catch(() => undefined)) !== undefined, 5_000);
    expect(fake.sent.map((s) => s.text)).toEqual(["early"]);
  });

  it("answers a number without WhatsApp as the final refusal its own send gives, and stops answering once stopped", async () => {
    const { fake, holder, partition, handlers } = await started({ notOnWhatsApp: ["+15550001234"] });
    await until(() => holder.accountHealth?.("default")?.connected === true, 5_000);
    const refused = await partition.send({ channel: "whatsapp", to: "+15550001234" }, { text: "hi" }).catch((e) => e);
    expect(refused).toBeInstanceOf(DeliveryError);
    expect(refused).toMatchObject({ retryable: false, reason: "chat_not_found" });
    expect([...handlers.keys()].sort()).toEqual(["whatsapp.send", "whatsapp.typing"]);
    await holder.stop();
    expect([...handlers.keys()]).toEqual([]);
    await expect(partition.send(ADA, { text: "after" })).rejects.toMatchObject({ retryable: true });
    expect(fake.sent).toEqual([]);
  });
});
