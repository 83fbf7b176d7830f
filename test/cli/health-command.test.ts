import { afterEach, describe, expect, it } from "vitest";
import { cli, tempHome } from "../support/fake-cli-io.js";
import { type TestGateway, startTestGateway } from "../support/test-gateway.js";

const TOKEN = "health-cli-token-0123456789";
const running: TestGateway[] = [];
afterEach(async () => {
  for (const gw of running.splice(0)) await gw.close();
});

describe("switchboard health", () => {
  it("prints each part of a ready gateway with the token, and exits 0", async () => {
    const gw = await startTestGateway({ token: TOKEN });
    running.push(gw);
    const url = gw.gateway.url.replace(/^ws/, "http");
    const result = await cli(["health", "--url", url], { home: gw.home, env: { SWITCHBOARD_GATEWAY_TOKEN: TOKEN } });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`gateway ${url}: ready (ready)`);
    expect(result.stdout).toMatch(/ok {4}state state {2}stores open, replay done/);
  });

  it("says how to see the parts when the gateway wants a token it was not given", async () => {
    const gw = await startTestGateway({ token: TOKEN });
    running.push(gw);
    const result = await cli(["health", "--url", gw.gateway.url], { home: gw.home });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("pass the gateway token with --token or SWITCHBOARD_GATEWAY_TOKEN");
  });

  it("exits 1 naming the URL when no gateway answers, also as JSON", async () => {
    const home = await tempHome();
    // Port 9 (discard) is never a gateway.
    const text = await cli(["health", "--url", "http://127.0.0.1:9"], { home });
    expect(text.code).toBe(1);
    expect(text.stdout).toMatch(/^gateway http:\/\/127\.0\.0\.1:9: not reachable \(.+\); is it running\?/);
    const json = await cli(["health", "--json", "--url", "http://127.0.0.1:9"], { home });
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ ready: false, phase: "unreachable" });
  });
});
