// The fake Discord gateway's own promises, which the cluster tests lean on: a second live connection
// of a bot is counted (so "none counted" means something), and a session whose connection dropped
// or closed with another code than 1000/1001 keeps its events for a RESUME until it expires, while a
// session closed with 1000 is gone.
import WebSocket from "ws";
import { afterEach, describe, expect, it } from "vitest";
import { identifyRaw } from "./fake-discord-gateway.js";
import { DISCORD_BOT, type FakeDiscord, startFakeDiscord } from "./fake-discord-server.js";
import { until } from "../support/gateway-child.js";
import { createManualClock } from "./manual-clock.js";

const fakes: FakeDiscord[] = [];
afterEach(async () => {
  for (const fake of fakes.splice(0)) await fake.close();
});
async function fake(options?: Parameters<typeof startFakeDiscord>[0]) {
  const started = await startFakeDiscord(options);
  fakes.push(started);
  return started;
}

/** RESUMEs `sessionId` after `seq`; resolves with the dispatches up to RESUMED, or "invalid". */
function resume(resumeUrl: string, sessionId: string, seq: number): Promise<string[] | "invalid"> {
  const ws = new WebSocket(resumeUrl);
  const seen: string[] = [];
  return new Promise((resolve) => {
    ws.on("message", (data) => {
      const packet = JSON.parse(String(data)) as { op: number; t: string; d: { content?: string } };
      if (packet.op === 10)
        ws.send(JSON.stringify({ op: 6, d: { token: DISCORD_BOT.token, session_id: sessionId, seq } }));
      if (packet.op === 9) resolve("invalid");
      if (packet.t === "MESSAGE_CREATE") seen.push(packet.d.content ?? "");
      if (packet.t === "RESUMED") resolve(seen);
    });
  }).finally(() => ws.terminate()) as Promise<string[] | "invalid">;
}

describe("the fake Discord gateway", () => {
  it("counts a second connection of a bot while one is open, and none after the first closed", async () => {
    const discord = await fake();
    const first = await identifyRaw(discord.apiRoot, DISCORD_BOT.token);
    const second = await identifyRaw(discord.apiRoot, DISCORD_BOT.token);
    expect(discord.secondConnections()).toBe(1);
    first.ws.terminate();
    second.ws.terminate();
    await until(() => discord.connections() === 0, 5_000);
    await identifyRaw(discord.apiRoot, DISCORD_BOT.token);
    expect(discord.secondConnections()).toBe(1);
  });

  it("replays to a RESUME what a dropped session missed after seq; a session closed with 1000 is gone", async () => {
    const discord = await fake();
    const dropped = await identifyRaw(discord.apiRoot, DISCORD_BOT.token);
    dropped.ws.terminate();
    await until(() => discord.connections() === 0, 5_000);
    discord.dispatch("MESSAGE_CREATE", discord.dm("while away"));
    // READY is 1, GUILD_CREATE 2: after 2 comes only what it missed; after 1 the guild again.
    expect(await resume(dropped.resumeUrl, dropped.sessionId, 2)).toEqual(["while away"]);
    expect(discord.logins.at(-1)).toMatchObject({ kind: "resume", replayed: 1 });
    const ended = await identifyRaw(discord.apiRoot, DISCORD_BOT.token);
    await new Promise((resolve) => ended.ws.once("close", resolve).close(1000));
    await until(() => discord.connections() === 0, 5_000);
    expect(await resume(ended.resumeUrl, ended.sessionId, 2)).toBe("invalid");
  });

  it("keeps a session closed with 4200 resumable until it expires; an expired session's RESUME gets op 9", async () => {
    const clock = createManualClock();
    const discord = await fake({ sessions: { ttlMs: 60_000, now: clock.now } });
    const closed = await identifyRaw(discord.apiRoot, DISCORD_BOT.token);
    await new Promise((resolve) => closed.ws.once("close", resolve).close(4200));
    discord.dispatch("MESSAGE_CREATE", discord.dm("while away"));
    clock.advance(59_000);
    expect(await resume(closed.resumeUrl, closed.sessionId, 2)).toEqual(["while away"]);
    closed.ws.terminate();
    await until(() => discord.connections() === 0, 5_000);
    // Dropped again by that resume's end: 60 s later it is gone.
    clock.advance(60_001);
    expect(await resume(closed.resumeUrl, closed.sessionId, 2)).toBe("invalid");
  });
});
