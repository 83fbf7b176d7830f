// Readiness of a gateway in its own process: its start waits on an MCP server this test holds, so
// the port answers while the gateway is still starting.
import { type ChildProcess, spawn } from "node:child_process";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cli, tempHome } from "../support/fake-cli-io.js";
import { rawRequest } from "../support/raw-gateway.js";
import { compiledScript } from "../support/compiled-script.js";

const children: ChildProcess[] = [];
const servers: http.Server[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
});

/** An HTTP server that holds every request until `release()`, then answers 500 (an MCP server that is down). */
async function heldMcpServer(): Promise<{ url: string; requests: () => number; release: () => void }> {
  const held: http.ServerResponse[] = [];
  let released = false;
  let requests = 0;
  const answer = (res: http.ServerResponse) => res.writeHead(500).end("down for maintenance");
  const server = http.createServer((_req, res) => {
    requests++;
    if (released) answer(res);
    else held.push(res);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    requests: () => requests,
    release() {
      released = true;
      for (const res of held.splice(0)) answer(res);
    },
  };
}

/** A port free right now, for a child that must listen on a port known before its start finishes. */
async function freePort(): Promise<number> {
  const probe = http.createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

async function readyz(port: number) {
  return rawRequest(port, { path: "/readyz", headers: { host: `127.0.0.1:${port}` } }).catch(() => undefined);
}

describe("GET /readyz of a gateway process", () => {
  it("answers 503 (starting) until the start is done, then 200 naming the MCP server that failed", async () => {
    const mcp = await heldMcpServer();
    const home = await tempHome();
    const port = await freePort();
    const script = path.resolve(import.meta.dirname, "../fakes/readiness-gateway-process.ts");
    const child = spawn(process.execPath, [await compiledScript(script)], {
      env: { ...process.env, SB_HOME: home, SB_PORT: String(port), SB_MCP_URL: mcp.url },
      stdio: ["ignore", "pipe", "pipe"],
    });
    children.push(child);
    await expect.poll(() => mcp.requests(), { timeout: 20_000 }).toBeGreaterThan(0);
    // The start waits on the MCP server; the port answers meanwhile.
    await expect.poll(async () => (await readyz(port))?.status, { timeout: 20_000 }).toBe(503);
    const starting = (await readyz(port))!;
    expect(starting.body).toMatchObject({ ready: false, phase: "starting" });
    expect(starting.body.parts).toContainEqual({
      kind: "state",
      name: "state",
      ok: false,
      reason: expect.stringMatching(/^starting/),
    });
    expect(starting.body.parts).toContainEqual({ kind: "mcp", name: "slow", ok: false, reason: "connecting" });
    expect((await rawRequest(port, { path: "/healthz" })).status).toBe(200);
    const cliStarting = await cli(["health", "--url", `http://127.0.0.1:${port}`], { home });
    expect(cliStarting.code).toBe(1);
    expect(cliStarting.stdout).toMatch(/NOT READY \(starting\)/);

    mcp.release();
    await expect.poll(async () => (await readyz(port))?.status, { timeout: 20_000 }).toBe(200);
    const ready = (await readyz(port))!;
    expect(ready.body).toMatchObject({ ready: true, phase: "ready" });
    expect(ready.body.parts).toContainEqual({
      kind: "mcp",
      name: "slow",
      ok: false,
      reason: expect.stringMatching(/^failed: /),
    });
    const cliReady = await cli(["health", "--json", "--url", `http://127.0.0.1:${port}`], { home });
    expect(cliReady.code).toBe(0);
    expect(JSON.parse(cliReady.stdout)).toEqual(ready.body);
  }, 60_000);
});
