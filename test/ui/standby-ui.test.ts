// The control UI opened on a standby gateway (README "Running several gateways"): the page, its
// WebSocket and every call go through the standby's relay (src/gateway/owner-relay.ts) to the
// schema's owner, in real Chromium against two real `gateway run` processes on one PostgreSQL schema.
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { connectGateway } from "../../src/cli/gateway-client.js";
import { useBrowser } from "../support/browser.js";
import { type GatewayBinary, useGatewayBinaries } from "../support/gateway-binary.js";
import { freshSchema, usePostgres } from "../support/postgres.js";
import { tempHome } from "../support/test-gateway.js";
import { connected, send } from "./ui-page.js";

const db = usePostgres();
const browser = useBrowser();
const start = useGatewayBinaries();

/** A gateway `nodeId` on `schema`. */
async function gateway(schema: string, nodeId: string): Promise<GatewayBinary> {
  const home = await tempHome();
  const config = { state: { backend: "postgres", postgres: { schema } }, gateway: { nodeId } };
  await writeFile(path.join(home, "switchboard.json5"), JSON.stringify(config));
  return start(home, { SWITCHBOARD_DATABASE_URL: db.url });
}

describe("the control UI on a standby gateway", { timeout: 120_000 }, () => {
  it("loads, connects and chats through the standby: the owner runs the turn and keeps the session", async () => {
    const schema = freshSchema();
    const owner = await gateway(schema, "gw-owner");
    const standby = await gateway(schema, "gw-standby");
    expect(standby.output()).toContain("as a standby: the owner is gw-owner");
    const { page } = await browser.open(`http://127.0.0.1:${standby.port}/`);
    await connected(page);
    await send(page, "hello through the standby");
    await page.locator("#messages .msg.assistant").filter({ hasText: "Echo: hello through the standby" }).waitFor();
    // The session list, fetched through the relay, shows the owner's session.
    await page.locator("#session-list button").first().waitFor();
    await page.context().close();
    // The owner, asked directly, holds the turn: the standby has no state of its own.
    const client = await connectGateway(owner.url);
    try {
      const history = await client.call<{ messages: Array<{ role: string; content: unknown }> }>("chat.history", {
        sessionKey: "main",
      });
      expect(history.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    } finally {
      await client.close();
    }
  });
});
