// `switchboard pairing` (docs/operations.md, "Pairing"): through the running gateway, or on the stored
// state when none runs, and then the gateway tells the approved sender when it starts.
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import type { Update } from "grammy/types";
import { afterEach, describe, expect, it } from "vitest";
import { STRINGS } from "../../src/commands/command-strings.js";
import { openPairingStore } from "../../src/inbound/pairing-store.js";
import { createMemoryLogger } from "../../src/logger.js";
import { openLocalState } from "../../src/state/local-state.js";
import { type FakeTelegramServer, startFakeTelegramServer } from "../fakes/fake-telegram-server.js";
import { cli, tempHome } from "../support/fake-cli-io.js";
import { startPairingGateway } from "../support/pairing-gateway.js";
import { startTestGateway } from "../support/test-gateway.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Gives stranger `senderId` a code in `home`'s stored state, as a gateway would have. */
async function storedCode(home: string, senderId: string, accountId = "default"): Promise<string> {
  const state = openLocalState({ dir: path.join(home, "state"), logger: createMemoryLogger() });
  const store = await openPairingStore({ state, path: path.join(home, "state", "pairing.json") });
  const asked = await store.ask(
    { channel: "telegram", accountId, senderId, chatId: senderId, sessionKey: "agent:main:main" },
    { codeTtlSeconds: 3600, maxPending: 3 },
  );
  await store.close();
  await state.close();
  if (asked.status !== "created") throw new Error(asked.status);
  return asked.request.code;
}

async function telegramGateway(home: string, fake: FakeTelegramServer) {
  const gw = await startPairingGateway(home, fake);
  cleanups.push(gw.close);
  return gw;
}

const dmFrom = (id: number, text: string) =>
  ({
    message: {
      message_id: 900 + id,
      date: 1767225600,
      chat: { id, type: "private" },
      from: { id, is_bot: false, first_name: "B" },
      text,
    },
  }) as unknown as Omit<Update, "update_id">;

describe("switchboard pairing without a gateway", () => {
  it("lists nothing on a fresh home, and writes nothing there", async () => {
    const home = await tempHome();
    const listed = await cli(["pairing", "list", "--url", "ws://127.0.0.1:9"], { home });
    expect(listed).toEqual({ code: 0, stdout: `${STRINGS.pairNone}\n`, stderr: "" });
    expect(existsSync(path.join(home, "state", "pairing.json"))).toBe(false);
  });

  it("lists and approves on the stored state; the gateway tells the sender when it starts and lets them in", async () => {
    const home = await tempHome();
    const code = await storedCode(home, "222");
    const listed = await cli(["pairing", "list", "--url", "ws://127.0.0.1:9"], { home });
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(STRINGS.pairLine(code, "222", "telegram", 60));

    const approved = await cli(["pairing", "approve", code.toLowerCase(), "--url", "ws://127.0.0.1:9"], { home });
    expect(approved).toMatchObject({ code: 0, stderr: "" });
    expect(approved.stdout).toBe(
      `${STRINGS.pairDone("approved", code, "222")}\nNo gateway runs: the sender is told when it starts.\n`,
    );

    const fake = await startFakeTelegramServer();
    cleanups.push(fake.close);
    await telegramGateway(home, fake);
    await expect
      .poll(() => fake.sent.map((s) => [s.chatId, s.text]), { timeout: 10_000 })
      .toEqual([["222", STRINGS.pairingApproved]]);
    fake.push(dmFrom(222, "hello"));
    await expect.poll(() => fake.sent.length, { timeout: 10_000 }).toBe(2);
    expect(fake.sent[1]).toMatchObject({ chatId: "222", text: "Echo: hello" });
  });

  it.each([
    [
      "a reused code",
      async (home: string) => {
        const code = await storedCode(home, "222");
        await cli(["pairing", "deny", code, "--url", "ws://127.0.0.1:9"], { home });
        return { code, expected: STRINGS.pairUsed(code, "denied") };
      },
    ],
    [
      "another account's code",
      async (home: string) => {
        const code = await storedCode(home, "222", "work");
        return {
          code,
          expected: STRINGS.pairWrongAccount(code, "telegram account work"),
          flags: ["--channel", "telegram"],
        };
      },
    ],
    ["an unknown code", async () => ({ code: "ABCDEFGH", expected: STRINGS.pairUnknown("ABCDEFGH") })],
  ] as Array<[string, (home: string) => Promise<{ code: string; expected: string; flags?: string[] }>]>)(
    "refuses %s with exit 1 and lets nobody in",
    async (_what, arrange) => {
      const home = await tempHome();
      const { code, expected, flags = [] } = await arrange(home);
      const result = await cli(["pairing", "approve", code, ...flags, "--url", "ws://127.0.0.1:9", "--json"], { home });
      expect(result.code).toBe(1);
      expect(JSON.parse(result.stdout)).toMatchObject({ ok: false, gateway: false });
      const text = await cli(["pairing", "approve", code, ...flags, "--url", "ws://127.0.0.1:9"], { home });
      expect(text.stdout.trim()).toBe(expected);
      const list = await cli(["pairing", "list", "--json", "--url", "ws://127.0.0.1:9"], { home });
      expect(JSON.parse(list.stdout).allowed).toEqual([]);
    },
  );
});

describe("switchboard pairing with a gateway running", () => {
  it("approves through the gateway, which tells the sender at once", async () => {
    const fake = await startFakeTelegramServer();
    cleanups.push(fake.close);
    const home = await tempHome();
    const gw = await telegramGateway(home, fake);
    fake.push(dmFrom(222, "hi"));
    await expect.poll(() => fake.sent.length, { timeout: 10_000 }).toBe(1);
    const code = /Pairing code: (\w{8})/.exec(fake.sent[0]!.text)![1]!;
    const url = gw.gateway.url;
    expect((await cli(["pairing", "list", "--url", url], { home })).stdout).toContain(code);
    const approved = await cli(["pairing", "approve", code, "--url", url, "--json"], { home });
    expect(approved.code).toBe(0);
    expect(JSON.parse(approved.stdout)).toMatchObject({ ok: true, gateway: true, request: { senderId: "222" } });
    await expect.poll(() => fake.sent.length, { timeout: 10_000 }).toBe(2);
    expect(fake.sent[1]).toMatchObject({ chatId: "222", text: STRINGS.pairingApproved });
    // Used through the gateway: refused the second time, exit 1.
    const again = await cli(["pairing", "approve", code, "--url", url], { home });
    expect(again).toMatchObject({ code: 1, stdout: `${STRINGS.pairUsed(code, "approved")}\n` });
  });

  it("writes nothing behind a gateway it cannot reach, and says how to reach it", async () => {
    const home = await tempHome();
    await writeFile(path.join(home, "switchboard.json5"), "{}");
    const gw = await startTestGateway({ home });
    cleanups.push(gw.close);
    const result = await cli(["pairing", "approve", "ABCDEFGH", "--url", "ws://127.0.0.1:9"], { home });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/another gateway \(pid \d+.*already runs.*pass --url/);
  });
});
