// The owner's drain of the hand-off inbox with real gateway processes on one real PostgreSQL schema
// (docs/scale-out.md "Inbound on any gateway"): an owner whose bot is not initialized yet (getMe
// refused) takes a handed-off Telegram update in once getMe succeeds; an owner SIGKILLed at the
// commit that stores rows' intake and deletes them (before it is sent, once it committed) leaves
// each hook, and each Telegram update in order, to run once on the next; a standby's Telegram
// webhook refuses what the owner's refuses (405, 415, 413, 400) and answers 503 when it cannot store.
import { afterEach, describe, expect, it } from "vitest";
import { type FakeTelegramServer, adaDm, startFakeTelegramServer } from "../fakes/fake-telegram-server.js";
import { type Cluster, type ClusterGateway, useCluster } from "../support/cluster-harness.js";
import { type ChatTraffic, chatsAnswered, chatsOutcome, postHookTurns } from "../support/cluster-traffic.js";
import { until } from "../support/gateway-child.js";
import { usePostgres } from "../support/postgres.js";
import { afterKillAtHandoffDelete, killAtHandoffDelete, killedAt } from "../support/kill-at-handoff.js";
import { rawRequest } from "../support/raw-gateway.js";

const db = usePostgres();
const startCluster = useCluster(db);
const fakes: FakeTelegramServer[] = [];
afterEach(async () => {
  for (const fake of fakes.splice(0)) await fake.close();
});

const WEBHOOK = { webhookUrl: "https://bot.example.com/telegram-webhook", webhookSecret: "s3cret-webhook" };
const HOOK_TOKEN = "handoff-drain-token-0123456789";

/** An owner and a standby on the fake Bot API, Telegram by webhook, hooks enabled. */
async function cluster(leaseTtlMs: number, env: Record<string, string> = {}) {
  const fake = await startFakeTelegramServer();
  fakes.push(fake);
  const started = await startCluster({
    size: 2,
    cluster: { leaseTtlMs, heartbeatMs: 500 },
    env: { SB_API_ROOT: fake.apiRoot, SB_TELEGRAM: JSON.stringify(WEBHOOK), SB_HOOK_TOKEN: HOOK_TOKEN, ...env },
    config: { hooks: { allowRequestSessionKey: true } },
  });
  const owner = await started.owner();
  return { fake, cluster: started, owner, standby: started.gateways.find((g) => g !== owner)! };
}

/** POSTs a webhook request as Telegram would (its secret header), with overrides for the refusals. */
function postUpdate(port: number, body: string | Buffer, headers: Record<string, string> = {}, method = "POST") {
  const all = { "content-type": "application/json", "x-telegram-bot-api-secret-token": WEBHOOK.webhookSecret };
  return rawRequest(port, { method, path: "/telegram-webhook", headers: { ...all, ...headers }, body });
}

const update = (text: string, id: number) => JSON.stringify({ update_id: id, ...adaDm(text, id) });

/** Every reply once, in order, once the answering gateway is idle. */
async function answeredOnce(fake: FakeTelegramServer, traffic: ChatTraffic, answering: ClusterGateway) {
  await until(() => chatsAnswered(fake, traffic), 60_000);
  await answering.idle();
  expect(chatsOutcome(fake, traffic)).toEqual({ missing: [], repeated: [], outOfOrder: [], misrouted: [] });
}

/** Each text's prompts and replies in the transcripts: a turn run twice would show two of either. */
async function turnsRun(c: Cluster, texts: string[]) {
  const count = async (role: string, text: string) =>
    (
      await c.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM transcript_events WHERE message->>'role' = $1 AND strpos(message::text, $2) > 0",
        [role, text],
      )
    )[0]?.n;
  return Promise.all(texts.map(async (text) => [text, await count("user", text), await count("assistant", text)]));
}

describe("the owner's drain of the hand-off inbox, in real processes", () => {
  it("takes a Telegram update handed off while its bot was not initialized (getMe refused) in once getMe succeeds", async () => {
    const { fake, cluster: c, owner, standby } = await cluster(60_000);
    let telegramBack!: () => void;
    const refused = fake.failFor(
      "getMe",
      { error_code: 502, description: "Bad Gateway" },
      new Promise<void>((r) => (telegramBack = r)),
    );
    // Stored by the standby while the owner is paused, then the owner dies: the standby takes over with getMe refused.
    c.pause(owner);
    expect((await postUpdate(standby.port, update("handed off before getMe", 41))).status).toBe(200);
    await c.kill(owner);
    const next = await c.owner({ not: owner, timeoutMs: 10_000 });
    // Its drain tried the row with the bot not initialized: an ordinary failure, counted and tried again.
    const tried = (l: string) => l.includes("handed-off inbound not taken in yet") && l.includes("Bot not initialized");
    await until(() => next.stderr().split("\n").some(tried), 20_000);
    expect(fake.sent).toEqual([]);
    telegramBack();
    await refused;
    await answeredOnce(fake, new Map([[111, ["handed off before getMe"]]]), next);
    expect(await c.query("SELECT id FROM inbound_handoff")).toEqual([]);
  }, 120_000);

  // The drain stores the rows' intake and deletes the rows in one statement (the row writer's batch):
  // killed before it is sent, the rows wait for the next owner; killed once it committed, the rows
  // are gone and their turns wait in the inbox, none started. Either way each turn runs once: one
  // prompt and one reply in its transcript, one reply at the fake.
  for (const at of ["send", "acked"] as const)
    it(`runs each hook once when the owner is SIGKILLed at the commit of the rows' intake and delete (${at})`, async () => {
      const { fake, cluster: c, owner, standby } = await cluster(60_000, await killAtHandoffDelete(at));
      c.pause(owner);
      const { traffic, answers } = await postHookTurns([standby.port], HOOK_TOKEN, {
        chats: 1,
        perChat: 3,
        firstChat: 3101,
      });
      expect(answers.map((a) => a.status)).toEqual([202, 202, 202]);
      c.resume(owner);
      // One statement: all three rows still waiting, or all three gone with their inbox entries stored.
      expect(await afterKillAtHandoffDelete(c, owner, "hook")).toEqual(killedAt(at));
      const next = await c.owner({ not: owner, timeoutMs: 10_000 });
      await answeredOnce(fake, traffic, next);
      expect(await c.query("SELECT id FROM inbound_handoff")).toEqual([]);
      expect(await turnsRun(c, traffic.get(3101)!)).toEqual([
        ["hook 3101 turn 1", 1, 1],
        ["hook 3101 turn 2", 1, 1],
        ["hook 3101 turn 3", 1, 1],
      ]);
    }, 120_000);

  // Telegram update rows are taken in together too: the three rows' deletes and their inbox entries
  // in one statement (the failpoint above), the chat's order kept, each answered once.
  for (const at of ["send", "acked"] as const)
    it(`answers each Telegram update once, in order, when the owner is SIGKILLed at the commit of the update rows' intake and delete (${at})`, async () => {
      const { fake, cluster: c, owner, standby } = await cluster(60_000, await killAtHandoffDelete(at));
      c.pause(owner);
      const texts = [1, 2, 3].map((i) => `update ${at} ${i}`);
      for (const [i, text] of texts.entries())
        expect((await postUpdate(standby.port, update(text, 60 + i))).status).toBe(200);
      c.resume(owner);
      expect(await afterKillAtHandoffDelete(c, owner, "telegram")).toEqual(killedAt(at));
      const next = await c.owner({ not: owner, timeoutMs: 10_000 });
      await answeredOnce(fake, new Map([[111, texts]]), next);
      expect(await c.query("SELECT id FROM inbound_handoff")).toEqual([]);
      expect(await turnsRun(c, texts)).toEqual(texts.map((text) => [text, 1, 1]));
    }, 120_000);

  it("refuses on a standby what the owner's webhook refuses (405, 415, 413, 400) and answers 503 when it cannot store; Telegram's resend is answered once", async () => {
    const { fake, cluster: c, owner, standby } = await cluster(30_000);
    const port = standby.port;
    expect((await postUpdate(port, "", {}, "GET")).status).toBe(405);
    expect((await postUpdate(port, update("as text", 51), { "content-type": "text/plain" })).status).toBe(415);
    const big = Buffer.alloc(1024 * 1024 + 1, 0x20);
    expect((await postUpdate(port, big, { "content-length": String(big.length) })).status).toBe(413);
    expect((await postUpdate(port, JSON.stringify({ not: "an update" }))).status).toBe(400);
    // The store fails (its table away for a moment): 503, nothing stored, Telegram resends.
    await c.query("ALTER TABLE inbound_handoff RENAME TO inbound_handoff_away");
    expect((await postUpdate(port, update("stored on the resend", 52))).status).toBe(503);
    await c.query("ALTER TABLE inbound_handoff_away RENAME TO inbound_handoff");
    expect((await postUpdate(port, update("stored on the resend", 52))).status).toBe(200);
    await answeredOnce(fake, new Map([[111, ["stored on the resend"]]]), owner);
    expect(fake.sent.map((s) => s.text)).toEqual(["Echo: stored on the resend"]);
  }, 120_000);
});
