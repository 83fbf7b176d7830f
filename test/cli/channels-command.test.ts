import { writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createFakeChannelAdapter } from "../fakes/fake-channel-adapter.js";
import { cli, tempHome } from "../support/fake-cli-io.js";
import { useTestGateways } from "../support/test-gateway.js";

const startGateway = useTestGateways();

describe("switchboard channels status", () => {
  it("lists token channels' accounts too, and says which ones the running gateway runs", async () => {
    const home = await tempHome();
    await writeFile(
      path.join(home, "switchboard.json5"),
      `{ gateway: { port: 1 }, channels: { telegram: { botToken: "123:abc", accounts: { work: { botToken: "456:def" } } }, discord: { token: "xyz" } } }`,
    );
    const offline = await cli(["channels", "status"], { home });
    expect(offline.code).toBe(0);
    expect(offline.stdout.trim().split("\n")).toEqual([
      "telegram default: token in the config, no gateway answered (start it with npm start)",
      "telegram work: token in the config, no gateway answered (start it with npm start)",
      "discord default: token in the config, no gateway answered (start it with npm start)",
    ]);

    const gw = await startGateway({ adapters: [createFakeChannelAdapter({ id: "telegram" })] });
    const live = await cli(["channels", "status", "--json", "--url", gw.gateway.url], { home });
    expect(live.code).toBe(0);
    expect(JSON.parse(live.stdout).accounts).toEqual([
      { channel: "telegram", accountId: "default", kind: "token", running: true },
      { channel: "telegram", accountId: "work", kind: "token", running: true },
      { channel: "discord", accountId: "default", kind: "token", running: false },
    ]);
  });
});
