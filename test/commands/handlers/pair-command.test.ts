// /pair from chat (docs/commands.md): owners of an account decide its codes; nobody else can.
import { describe, expect, it, onTestFinished } from "vitest";
import { STRINGS } from "../../../src/commands/command-strings.js";
import { createPairing } from "../../../src/inbound/pairing.js";
import { type PairingStore, openPairingStore } from "../../../src/inbound/pairing-store.js";
import { createMemoryLogger } from "../../../src/logger.js";
import { parseSessionKey } from "../../../src/routing/parse-session-key.js";
import { openMemoryState } from "../../../src/state/memory-state.js";
import {
  COMMAND_USER,
  GATEWAY_CLIENT,
  TALKER,
  createCommandHarness,
  dm,
  inGroup,
  terminal,
} from "../command-harness.js";
import { recordingDeliver } from "../../fakes/recording-deliver.js";

const LIMITS = { codeTtlSeconds: 3600, maxPending: 3 };

async function setup() {
  const { delivered, deliver } = recordingDeliver();
  let store!: PairingStore;
  const harness = await createCommandHarness({
    config: { channels: { telegram: { dmPolicy: "pairing", owners: ["42"], allowFrom: ["43"] } } },
    async pairing(now) {
      const state = openMemoryState();
      store = await openPairingStore({ state, path: "pairing.json", now });
      onTestFinished(async () => {
        await store.close();
        await state.close();
      });
      return createPairing({
        config: { channels: {} },
        store,
        deliver,
        parseKey: (raw) => parseSessionKey(raw)!,
        logger: createMemoryLogger(),
      }).control;
    },
  });
  /** A code for stranger `senderId` on Telegram's `accountId`. */
  const codeFor = async (senderId: string, accountId = "default") => {
    const asked = await store.ask(
      { channel: "telegram", accountId, senderId, chatId: senderId, sessionKey: `agent:main:telegram:dm:${senderId}` },
      LIMITS,
    );
    if (asked.status !== "created") throw new Error(asked.status);
    return asked.request.code;
  };
  return { ...harness, store: () => store, codeFor, delivered };
}

describe("/pair", () => {
  it("lists this account's codes for an owner, with who asked and when each expires", async () => {
    const h = await setup();
    const code = await h.codeFor("222");
    await h.codeFor("333", "work");
    h.clock.advance(30 * 60_000);
    const outcome = await h.dispatch(dm("42", "/pair"));
    expect(outcome?.reply).toBe([STRINGS.pairTitle(1), STRINGS.pairLine(code, "222", "telegram", 30)].join("\n"));
  });

  it("approves a code from the owner's chat: the sender is in and is told so", async () => {
    const h = await setup();
    const code = await h.codeFor("222");
    const outcome = await h.dispatch(dm("42", `/pair approve ${code.toLowerCase()}`));
    expect(outcome?.reply).toBe(STRINGS.pairDone("approved", code, "222"));
    expect(h.store().isPaired("telegram", "default", "222")).toBe(true);
    expect(h.delivered).toMatchObject([
      { target: { channel: "telegram", to: "222", accountId: "default" }, text: STRINGS.pairingApproved },
    ]);
    expect((await h.dispatch(dm("42", "/pair list")))?.reply).toBe(
      [STRINGS.pairNone, STRINGS.pairAllowedTitle(1), STRINGS.pairAllowedLine("222", "telegram")].join("\n"),
    );
  });

  it("denies a code: nobody is let in or told", async () => {
    const h = await setup();
    const code = await h.codeFor("222");
    expect((await h.dispatch(dm("42", `/pair deny ${code}`)))?.reply).toBe(STRINGS.pairDone("denied", code, "222"));
    expect(h.store().isPaired("telegram", "default", "222")).toBe(false);
    expect(h.delivered).toEqual([]);
  });

  it("refuses an expired code, a reused one, an unknown one and another account's", async () => {
    const h = await setup();
    const expired = await h.codeFor("222");
    h.clock.advance(3_600_000);
    expect((await h.dispatch(dm("42", `/pair approve ${expired}`)))?.reply).toBe(STRINGS.pairExpired(expired));
    const used = await h.codeFor("444");
    await h.dispatch(dm("42", `/pair approve ${used}`));
    expect((await h.dispatch(dm("42", `/pair approve ${used}`)))?.reply).toBe(STRINGS.pairUsed(used, "approved"));
    expect((await h.dispatch(dm("42", "/pair deny ZZZZZZZZ")))?.reply).toBe(STRINGS.pairUnknown("ZZZZZZZZ"));
    const fresh = await h.codeFor("555", "work");
    expect((await h.dispatch(dm("42", `/pair approve ${fresh}`)))?.reply).toBe(
      STRINGS.pairWrongAccount(fresh, "telegram account work"),
    );
    expect(h.store().isPaired("telegram", "work", "555")).toBe(false);
    expect(h.store().isPaired("telegram", "default", "222")).toBe(false);
  });

  it.each([
    ["a talker", TALKER, STRINGS.refusedCommands],
    ["a command user", COMMAND_USER, STRINGS.refusedOwner("/pair")],
  ])("refuses %s trying /pair in a DM, and lets nobody in", async (_who, sender, reply) => {
    const h = await setup();
    const code = await h.codeFor("222");
    expect(await h.dispatch(dm("43", `/pair approve ${code}`), sender)).toEqual({ reply, refused: true });
    expect(await h.dispatch(dm("43", "/pair"), sender)).toEqual({ reply, refused: true });
    expect(h.store().isPaired("telegram", "default", "222")).toBe(false);
  });

  it("ignores a guest's /pair in a group without a word", async () => {
    const h = await setup();
    const code = await h.codeFor("222");
    expect(await h.dispatch(inGroup("43", `/pair approve ${code}`), TALKER)).toEqual({ refused: true });
    expect(h.store().isPaired("telegram", "default", "222")).toBe(false);
  });

  it("reaches every account from the terminal chat (the gateway's clients act as the owner)", async () => {
    const h = await setup();
    const code = await h.codeFor("333", "work");
    expect((await h.dispatch(terminal(`/pair approve ${code}`), GATEWAY_CLIENT))?.reply).toBe(
      STRINGS.pairDone("approved", code, "333"),
    );
  });

  it("answers bad usage with the usage line", async () => {
    const h = await setup();
    expect((await h.dispatch(dm("42", "/pair approve")))?.reply).toBe(
      STRINGS.usage("/pair [list|approve <code>|deny <code>]"),
    );
  });
});
