// A started WhatsApp adapter on the fake platform (sockets on baileys' own event emitter), for
// adapter tests and the contract suite.
import { mkdtemp } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { createWhatsAppAdapter, defaultAuthDir } from "../../../adapters/whatsapp/index.js";
import type { ManualClock } from "../../fakes/manual-clock.js";
import { WhatsAppConfigSchema } from "../../../adapters/whatsapp/whatsapp-config.js";
import type { InboundMessage } from "../../../src/index.js";
import { createMemoryLogger } from "../../../src/logger.js";
import type { ContractFailure, ContractLive, ContractPlatform } from "../../contracts/adapter-contract.js";
import { type FakeWhatsAppOptions, createFakeWhatsApp, linkDevice, waMessage } from "../../fakes/fake-whatsapp.js";
import { receivedMessages, testStartContext } from "../../support/channel-context.js";
import { closedAfterEach } from "../../support/closed-after-each.js";

/** Options of {@link startWhatsAppHarness}. */
export interface HarnessOptions extends FakeWhatsAppOptions {
  /** `channels.whatsapp` fields */
  config?: Record<string, unknown>;
  home?: string;
  /** default true: credentials of a linked device are written first */
  linked?: boolean;
  /** runs before a message counts as received; a rejection means "not stored" */
  beforeReceive?: (message: InboundMessage) => Promise<void>;
  /** default 200 */
  sendWaitMs?: number;
  /** the reconnect timers; default Node's */
  timers?: ManualClock["timers"];
}

export const GROUP = "120363000000000001@g.us";
export const ADA = "+15550009999";
export const ADA_JID = "15550009999@s.whatsapp.net";

/** Starts the fake platform and a WhatsApp adapter on it (short backoff, a temporary home). */
async function startWhatsAppHarness(options: HarnessOptions = {}) {
  const home = options.home ?? (await mkdtemp(path.join(os.tmpdir(), "sb-wa-")));
  if (options.linked !== false) await linkDevice(defaultAuthDir(home, "default"));
  const fake = createFakeWhatsApp({ groups: { [GROUP]: "Family Chat" }, ...options });
  const logger = createMemoryLogger();
  const { received, sink } = receivedMessages(options.beforeReceive);
  const config = WhatsAppConfigSchema.parse(options.config ?? {});
  const adapter = createWhatsAppAdapter(config, {
    home,
    logger,
    socketFactory: fake.factory,
    backoff: { minMs: 5, maxMs: 20, factor: 2, jitter: 0 },
    sendWaitMs: options.sendWaitMs ?? 200,
    ...(options.timers && { timers: options.timers }),
  });
  const context = await testStartContext("whatsapp", home);
  await adapter.start(sink, context);
  return {
    fake,
    adapter,
    home,
    /** the channel state the adapter was started with (credentials, keys, status) */
    context,
    logger,
    received,
    async close() {
      await adapter.stop();
    },
  };
}

/** The WhatsApp adapter as the shared contract sees it. */
export async function whatsappContractPlatform(): Promise<ContractPlatform> {
  const harness = await startWhatsAppHarness();
  const failures: Record<ContractFailure, () => void> = {
    rate_limited: () => harness.fake.failNextSend("rate_limited"),
    chat_not_found: () => harness.fake.removeNumber(ADA),
    network: () => harness.fake.failNextSend("connection_closed"),
  };
  return {
    adapter: harness.adapter,
    target: { channel: "whatsapp", to: ADA },
    sent: () =>
      harness.fake.sent.map((s) => ({
        to: s.jid.endsWith("@s.whatsapp.net") ? `+${s.jid.split("@")[0]}` : s.jid,
        text: s.text,
      })),
    failNextSend: (failure) => failures[failure](),
    close: harness.close,
  };
}

/** The WhatsApp adapter on the fake platform, linked but not started, for the contract's live loop. */
export async function whatsappContractLive(): Promise<ContractLive> {
  const home = await mkdtemp(path.join(os.tmpdir(), "sb-wa-live-"));
  await linkDevice(defaultAuthDir(home, "default"));
  const fake = createFakeWhatsApp();
  const adapter = createWhatsAppAdapter(WhatsAppConfigSchema.parse({}), {
    home,
    logger: createMemoryLogger(),
    socketFactory: fake.factory,
  });
  const write = async (fromMe: boolean, text: string) =>
    fake.deliver([
      waMessage({ key: { remoteJid: ADA_JID, fromMe }, message: { conversation: text }, pushName: "Ada" }),
    ]);
  return {
    adapter,
    userWrites: (text) => write(false, text),
    // What the owner's phone (or the bot's own send) looks like when WhatsApp echoes it: fromMe.
    botWrites: (text) => write(true, text),
    sent: () => fake.sent.map((s) => ({ to: `+${s.jid.split("@")[0]}`, text: s.text })),
    openConnections: () => fake.sockets.filter((s) => !s.ended).length,
    close: async () => undefined,
  };
}

/** A started harness as {@link startWhatsAppHarness} returns it. */
export type WhatsAppHarness = Awaited<ReturnType<typeof startWhatsAppHarness>>;

/** Returns a `harness` function whose harnesses are all closed after each test of the calling file. */
export function useWhatsAppHarness(): (options?: HarnessOptions) => Promise<WhatsAppHarness> {
  return closedAfterEach(startWhatsAppHarness);
}
