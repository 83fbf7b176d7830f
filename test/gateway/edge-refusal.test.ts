// The edge of a real gateway process under a cross-site attack: a page on another origin, in real
// Chromium, fires no-cors POSTs at the webhooks. They are refused for what a browser can send
// (their Origin, their content type) before any token is read, so the real caller is never locked out.
// A DNS-rebound page (same-origin to itself, so it may POST JSON) is refused for being a browser at
// all (its Origin, its Sec-Fetch-Site): hook callers are servers. Hooks have no Host check, so a server
// behind a reverse proxy that keeps the public Host is served.
import { writeFile } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import type { Page } from "playwright-core";
import { afterEach, describe, expect, it } from "vitest";
import { useBrowser } from "../support/browser.js";
import { tempHome } from "../support/fake-cli-io.js";
import { useGatewayBinaries } from "../support/gateway-binary.js";
import { rawRequest } from "../support/raw-gateway.js";

const HOOK_TOKEN = "hook-token-0123456789";
/** A name an attacker controls, rebound to 127.0.0.1 (as a DNS answer with a short TTL would be). */
const REBOUND = "rebind.evil.example";
const browser = useBrowser([`--host-resolver-rules=MAP ${REBOUND} 127.0.0.1`]);
const startGateway = useGatewayBinaries();
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** A gateway process with hooks on (and `gateway` config, e.g. its token); `port` is where the hooks listen. */
async function hooksGateway(gateway: object = {}) {
  const home = await tempHome();
  await writeFile(
    path.join(home, "switchboard.json5"),
    JSON.stringify({ gateway, hooks: { enabled: true, token: HOOK_TOKEN } }),
  );
  return startGateway(home);
}

/** The real caller: a server with the right token and no Origin (`headers`: what its proxy adds). */
const realCaller = (port: number, headers: Record<string, string> = {}) =>
  rawRequest(port, {
    method: "POST",
    path: "/hooks/agent",
    headers: { "content-type": "application/json", authorization: `Bearer ${HOOK_TOKEN}`, ...headers },
    body: JSON.stringify({ message: "deploy finished", deliver: false }),
  });

/**
 * The page's six same-origin JSON POSTs to the hooks, their statuses. Same-origin: JSON goes without
 * a preflight. Six is over the hook lockout's five failures.
 */
const sixSameOriginPosts = (page: Page) =>
  page.evaluate(async () => {
    const out: number[] = [];
    for (let i = 0; i < 6; i++) {
      const headers = { "content-type": "application/json" };
      out.push((await fetch("/hooks/agent", { method: "POST", headers, body: '{"message":"x"}' })).status);
    }
    return out;
  });

/** Serves one attacker page on its own port: another origin than the gateway's. */
async function attackerSite(): Promise<string> {
  const server = http.createServer((_req, res) =>
    res.writeHead(200, { "content-type": "text/html" }).end("<p>cats</p>"),
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(() => new Promise((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

describe("edge refusals of a gateway process", { timeout: 90_000 }, () => {
  it("refuses a cross-origin page's no-cors webhook POSTs with 403 before the token, and the real caller gets in", async () => {
    const gateway = await hooksGateway();
    const { page } = await browser.open(await attackerSite());
    const statuses: number[] = [];
    page.on("response", (response) => response.url().includes("/hooks/") && statuses.push(response.status()));
    const target = `http://127.0.0.1:${gateway.port}/hooks/agent`;
    await page.evaluate(async (url) => {
      const body = JSON.stringify({ message: "run rm -rf" });
      // What a page can send without asking: no-cors, text/plain, no token. Twelve is over any limit.
      for (let i = 0; i < 12; i++)
        await fetch(url, { method: "POST", mode: "no-cors", headers: { "content-type": "text/plain" }, body });
      // A JSON request needs a preflight, which the gateway refuses, so the POST is never sent.
      await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body }).catch(
        () => "blocked",
      );
    }, target);
    expect(statuses.length).toBeGreaterThanOrEqual(12);
    expect(new Set(statuses)).toEqual(new Set([403]));
    const answer = await realCaller(gateway.port);
    expect([answer.status, answer.body.ok]).toEqual([202, true]);
  });

  it("refuses a DNS-rebound page's same-origin JSON POSTs with 403 before the token, and the real caller gets in", async () => {
    const gateway = await hooksGateway();
    // The page is the gateway's own (refused 403 for its Host), but its origin is the rebound name's;
    // its POSTs are refused for their browser marks (hooks have no Host check).
    const { page } = await browser.open(`http://${REBOUND}:${gateway.port}/`);
    expect(await sixSameOriginPosts(page)).toEqual([403, 403, 403, 403, 403, 403]);
    const answer = await realCaller(gateway.port);
    expect([answer.status, answer.body.ok]).toEqual([202, true]);
  });

  it("refuses a DNS-rebound page's JSON POSTs with 403 on a gateway with a token too (no Host check there), and the real caller gets in", async () => {
    const gateway = await hooksGateway({ bind: "127.0.0.1", auth: { token: "gateway-token-0123456789" } });
    // With a gateway token any name reaches the gateway: the page loads, and only its browser marks give it away.
    const { page } = await browser.open(`http://${REBOUND}:${gateway.port}/`);
    expect(await sixSameOriginPosts(page)).toEqual([403, 403, 403, 403, 403, 403]);
    const answer = await realCaller(gateway.port);
    expect([answer.status, answer.body.ok]).toEqual([202, true]);
  });

  it("answers 415 to text/plain without a token, however often, and still accepts the real caller", async () => {
    const gateway = await hooksGateway();
    for (let i = 0; i < 12; i++) {
      const plain = await rawRequest(gateway.port, {
        method: "POST",
        path: "/hooks/agent",
        headers: { "content-type": "text/plain" },
        body: '{"message":"x"}',
      });
      expect([plain.status, plain.body.error.code]).toEqual([415, "UNSUPPORTED_MEDIA_TYPE"]);
    }
    const foreign = await rawRequest(gateway.port, {
      method: "POST",
      path: "/hooks/agent",
      headers: { "content-type": "application/json", origin: "http://evil.example" },
      body: '{"message":"x"}',
    });
    expect([foreign.status, foreign.body.error.code]).toEqual([403, "FORBIDDEN"]);
    expect((await realCaller(gateway.port)).status).toBe(202);
  });

  it("serves a server caller with the right hook token whose reverse proxy keeps the public Host (no gateway token)", async () => {
    // Caddy's default, nginx with `proxy_set_header Host $host`: the gateway sees the public name.
    const gateway = await hooksGateway({ trustedProxies: ["127.0.0.1"] });
    const answer = await realCaller(gateway.port, { host: "hooks.example.com", "x-forwarded-for": "203.0.113.7" });
    expect([answer.status, answer.body.ok]).toEqual([202, true]);
  });
});
