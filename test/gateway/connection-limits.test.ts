import { afterEach, describe, expect, it } from "vitest";
import {
  connectionBudget,
  createPendingGate,
  openFileLimit,
  transcriptHandleBudget,
} from "../../src/gateway/connection-limits.js";
import { type FakeTelegramServer, adaDm, startFakeTelegramServer } from "../fakes/fake-telegram-server.js";
import { until, useGatewayChildren } from "../support/gateway-child.js";
import { type RawSocket, rawSocket, req } from "../support/raw-gateway.js";
import { tempHome } from "../support/test-gateway.js";

describe("openFileLimit", () => {
  it("reads the soft limit from /proc/self/limits, and nothing where there is none", () => {
    const limits =
      "Limit                     Soft Limit           Hard Limit           Units\nMax open files            256                  4096                 files\n";
    expect(openFileLimit(() => limits)).toBe(256);
    expect(openFileLimit(() => limits.replace("256", "unlimited"))).toBeUndefined();
    expect(
      openFileLimit(() => {
        throw new Error("ENOENT");
      }),
    ).toBeUndefined();
  });
});

describe("connectionBudget", () => {
  it.each([
    [256, 128],
    [1024, 768],
    [65_536, 49_152],
    [100, 8],
  ])("leaves storage a reserve under a limit of %i descriptors: %i connections", (limit, budget) => {
    expect(connectionBudget(limit)).toBe(budget);
  });
});

describe("transcriptHandleBudget", () => {
  it.each([
    [undefined, 256],
    [256, 256],
    [1024, 256],
    [20_000, 1_250],
    [65_536, 4_096],
  ])(
    "under a limit of %s descriptors keeps %i transcript files open, within the storage reserve above 256",
    (limit, handles) => {
      expect(transcriptHandleBudget(limit)).toBe(handles);
      if (limit !== undefined && limit > 256) expect(handles).toBeLessThanOrEqual(limit - connectionBudget(limit)!);
    },
  );
});

describe("createPendingGate", () => {
  it("caps pending sockets per client and in total, and frees a slot once, however often it is released", () => {
    const gate = createPendingGate({ pendingPerClient: 2, pendingTotal: 3 });
    const a1 = gate.admit("a")!;
    gate.admit("a");
    expect(gate.admit("a")).toBeUndefined();
    gate.admit("b");
    expect(gate.admit("c")).toBeUndefined();
    a1();
    a1();
    expect(gate.admit("c")).toBeDefined();
    expect(gate.admit("d")).toBeUndefined();
  });
});

const start = useGatewayChildren();
const fakes: FakeTelegramServer[] = [];
const sockets: RawSocket[] = [];
afterEach(async () => {
  for (const ws of sockets.splice(0)) ws.close();
  for (const fake of fakes.splice(0)) await fake.close();
});

/** Opens `count` idle sockets at once that never send connect; resolves with those the gateway let in. */
async function idleFlood(port: number, count: number): Promise<RawSocket[]> {
  const opened = await Promise.all(Array.from({ length: count }, () => rawSocket(port).catch(() => undefined)));
  const open = opened.filter((ws): ws is RawSocket => ws !== undefined);
  sockets.push(...open);
  return open;
}

/** Opens up to `count` sockets one after another, each authenticated before the next; resolves with those that got in. */
async function connectedFlood(port: number, count: number): Promise<RawSocket[]> {
  const open: RawSocket[] = [];
  for (let i = 0; i < count; i++) {
    const ws = await rawSocket(port).catch(() => undefined);
    if (!ws) continue;
    sockets.push(ws);
    ws.send(req("c", "connect", {}));
    const answer = await Promise.race([ws.next((f) => f.id === "c", 20_000), ws.closed]).catch(() => undefined);
    if (answer && "ok" in answer) open.push(ws);
  }
  return open;
}

const stillOpen = (list: RawSocket[]) => list.filter((ws) => ws.socket.readyState === ws.socket.OPEN).length;

describe("a gateway process under a socket flood and a 256-descriptor limit", { timeout: 120_000 }, () => {
  it("refuses sockets before storage starves, and a Telegram DM is still answered", async () => {
    const fake = await startFakeTelegramServer();
    fakes.push(fake);
    const home = await tempHome();
    const gateway = await start(
      "platform-gateway-process.ts",
      { SB_HOME: home, SB_API_ROOT: fake.apiRoot },
      { descriptorLimit: 256 },
    );
    const port = Number(new URL(gateway.url).port);
    // 400 sockets that never send connect: only a few may wait at once, and the deadline closes those.
    const idle = await idleFlood(port, 400);
    expect(stillOpen(idle)).toBeLessThanOrEqual(16);
    expect((await Promise.all(idle.map((ws) => ws.closed))).map((c) => c.code)).toEqual(idle.map(() => 4401));
    // 300 that do authenticate (a loopback gateway needs no token): the descriptor reserve stops them.
    const authenticated = await connectedFlood(port, 300);
    expect(authenticated.length).toBeGreaterThan(0);
    expect(authenticated.length).toBeLessThanOrEqual(128);
    fake.push(adaDm("still there?", 1));
    await until(() => fake.sent.some((sent) => sent.text === "Echo: still there?"), 30_000);
    expect(gateway.stderr()).not.toMatch(/EMFILE|agent failed/i);
    expect(gateway.stderr()).toContain("descriptor reserve for storage reached");
  });
});
