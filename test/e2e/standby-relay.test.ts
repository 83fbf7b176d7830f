// Two real gateways (`bin/switchboard gateway run`) on one PostgreSQL schema: the second is a
// standby whose front is the owner relay (src/gateway/owner-relay.ts). A webhook and a WebSocket
// `chat.send` sent to the standby's port are answered by the owner; when the owner is SIGKILLed the
// relayed socket closes 1012 and a client reconnecting to the same port reaches the standby, which
// owns the schema by then.
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import WebSocket from "ws";
import { type GatewayClient, connectGateway } from "../../src/cli/gateway-client.js";
import { type GatewayBinary, useGatewayBinaries } from "../support/gateway-binary.js";
import { until } from "../support/gateway-child.js";
import { freshSchema, usePostgres } from "../support/postgres.js";
import { rawRequest } from "../support/raw-gateway.js";
import { nextEvent, tempHome } from "../support/test-gateway.js";

const db = usePostgres();
const start = useGatewayBinaries();
const HOOK_TOKEN = "hook-token-0123456789";

/** A gateway `nodeId` on `schema`, webhooks on; a short TTL is not needed: a SIGKILL frees the lease at once. */
async function gateway(schema: string, nodeId: string): Promise<GatewayBinary> {
  const home = await tempHome();
  const config = {
    state: { backend: "postgres", postgres: { schema } },
    gateway: { nodeId },
    hooks: { enabled: true, token: HOOK_TOKEN },
  };
  await writeFile(path.join(home, "switchboard.json5"), JSON.stringify(config));
  return start(home, { SWITCHBOARD_DATABASE_URL: db.url });
}

/** A client of `url` subscribed to the main session. */
async function operator(url: string): Promise<GatewayClient> {
  const client = await connectGateway(url);
  await client.call("subscribe", { sessionKeys: ["main"] });
  return client;
}

/** `chat.send` on `client` and the text of its reply. */
async function chat(client: GatewayClient, message: string): Promise<string> {
  const reply = nextEvent<{ text: string; kind: string }>(client, "chat.delivery", (p) => p.kind === "reply");
  expect(await client.call("chat.send", { message })).toMatchObject({ status: "started" });
  return (await reply).text;
}

describe("a standby gateway relaying to its schema's owner", () => {
  it("answers a webhook and a WebSocket chat.send sent to the standby's port from the owner", async () => {
    const schema = freshSchema();
    const owner = await gateway(schema, "gw-owner");
    const standby = await gateway(schema, "gw-standby");
    expect(standby.output()).toContain("as a standby: the owner is gw-owner");
    const hook = await rawRequest(standby.port, {
      method: "POST",
      path: "/hooks/agent",
      headers: { "content-type": "application/json", authorization: `Bearer ${HOOK_TOKEN}` },
      body: JSON.stringify({ message: "nightly report", deliver: false, idempotencyKey: "night-1" }),
    });
    expect(hook.status).toBe(202);
    const client = await operator(standby.url);
    try {
      expect(await client.call("agent.wait", { runId: hook.body.runId, timeoutMs: 15_000 })).toMatchObject({
        status: "ok",
      });
      expect(await chat(client, "hello through the standby")).toEqual(expect.any(String));
      // Who answered: the owner (a standby has no core; its cluster.status would not exist).
      const status = await client.call<{ members: Array<{ nodeId: string; role: string }> }>("cluster.status", {});
      expect(status.members.map((m) => [m.nodeId, m.role])).toEqual([
        ["gw-owner", "owner"],
        ["gw-standby", "standby"],
      ]);
      const history = await client.call<{ messages: Array<{ role: string }> }>("chat.history", { sessionKey: "main" });
      expect(history.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    } finally {
      await client.close();
    }
    expect(owner.exited()).toBe(false);
  }, 120_000);

  it("closes a relayed WebSocket 1012 when the owner is SIGKILLed; reconnecting to the same port reaches the standby, now the owner", async () => {
    const schema = freshSchema();
    const owner = await gateway(schema, "gw-owner");
    const standby = await gateway(schema, "gw-standby");
    const before = await operator(standby.url);
    expect(await chat(before, "before the kill")).toEqual(expect.any(String));
    await before.close();
    const socket = new WebSocket(standby.url);
    const closed = new Promise<number>((resolve) => socket.once("close", (code) => resolve(code)));
    await new Promise((resolve, reject) => {
      socket.once("open", resolve);
      socket.once("error", reject);
    });
    const killedAt = Date.now();
    owner.child.kill("SIGKILL");
    expect(await closed).toBe(1012);
    const closedMs = Date.now() - killedAt;
    await until(async () => (await rawRequest(standby.port, { path: "/healthz" })).body.ok === true, 30_000);
    console.info(
      `relayed socket closed 1012 ${closedMs} ms after the SIGKILL; standby owned ${Date.now() - killedAt} ms after`,
    );
    const after = await operator(standby.url);
    try {
      expect(await chat(after, "after the kill")).toEqual(expect.any(String));
      const history = await after.call<{ messages: Array<{ role: string }> }>("chat.history", { sessionKey: "main" });
      expect(history.messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    } finally {
      await after.close();
    }
  }, 120_000);
});
