// createPairing: the code's message and the approval notice reach the delivery gate once, also across a crash.
import { describe, expect, it, onTestFinished } from "vitest";
import { parseConfig } from "../../src/config/index.js";
import { createPairing } from "../../src/inbound/pairing.js";
import { openPairingStore } from "../../src/inbound/pairing-store.js";
import { createMemoryLogger } from "../../src/logger.js";
import { InboundMessageSchema } from "../../src/routing/inbound-message.js";
import { parseSessionKey } from "../../src/routing/parse-session-key.js";
import { openMemoryState } from "../../src/state/memory-state.js";
import { createManualClock } from "../fakes/manual-clock.js";
import { recordingDeliver } from "../fakes/recording-deliver.js";

const DM_KEY = parseSessionKey("agent:main:main")!;
const fromBob = (text: string) =>
  InboundMessageSchema.parse({
    channel: "telegram",
    chat: { type: "direct", id: "222" },
    sender: { id: "222", username: "bob" },
    text,
  });

async function setup() {
  const clock = createManualClock();
  const state = openMemoryState();
  const store = await openPairingStore({ state, path: "pairing.json", now: clock.now });
  onTestFinished(async () => {
    await store.close();
    await state.close();
  });
  const { delivered, deliver } = recordingDeliver();
  const pairing = createPairing({
    config: parseConfig({ channels: { telegram: { dmPolicy: "pairing", pairing: { codeTtlSeconds: 600 } } } }).config,
    store,
    deliver,
    parseKey: (raw) => parseSessionKey(raw)!,
    logger: createMemoryLogger(),
    now: clock.now,
  });
  return { store, pairing, delivered, clock };
}

describe("createPairing", () => {
  it("sends a stranger's code once, saying how long it lives, and stays silent at their next messages", async () => {
    const { pairing, delivered, clock } = await setup();
    await pairing.onStranger(fromBob("hi"), DM_KEY);
    expect(delivered).toHaveLength(1);
    expect(delivered[0]).toMatchObject({
      target: { channel: "telegram", to: "222" },
      kind: "notice",
      bypassPolicy: true,
    });
    expect(delivered[0]!.text).toContain("The code expires in 10 minutes.");
    clock.advance(60_000);
    await pairing.onStranger(fromBob("hello??"), DM_KEY);
    expect(delivered).toHaveLength(1);
  });

  it("hands a code's message over at the sender's next message when a crash kept it from the outbox, with the same key", async () => {
    const { store, pairing, delivered } = await setup();
    // The table holds the code, but the process died before its message reached the outbox.
    const asked = await store.ask(
      { channel: "telegram", accountId: "default", senderId: "222", chatId: "222", sessionKey: DM_KEY.key },
      { codeTtlSeconds: 600, maxPending: 3 },
    );
    if (asked.status !== "created") throw new Error(asked.status);
    await pairing.onStranger(fromBob("still there?"), DM_KEY);
    expect(delivered.map((d) => d.idempotencyKey)).toEqual([`pairing:${asked.request.code}:code`]);
    expect(delivered[0]!.text).toContain(asked.request.code);
    await pairing.onStranger(fromBob("?"), DM_KEY);
    expect(delivered).toHaveLength(1);
  });

  it("tells the senders approved on the stored state when the gateway starts, once", async () => {
    const { store, pairing, delivered } = await setup();
    await pairing.onStranger(fromBob("hi"), DM_KEY);
    const [code] = store.list().pending.map((p) => p.code);
    expect((await store.approve(code!, "cli")).ok).toBe(true);
    await pairing.announcePending();
    await pairing.announcePending();
    expect(delivered.map((d) => d.idempotencyKey)).toEqual([`pairing:${code}:code`, `pairing:${code}:approved`]);
  });
});
