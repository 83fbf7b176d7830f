// A gateway on PostgreSQL whose database goes away: it stays up, `/healthz` says `degraded` and why,
// a message sent meanwhile is not acknowledged until it is stored, and once the server is back it
// is answered; the log says so once per change, not once per message.
import { describe, expect, it } from "vitest";
import { usePrivatePostgres } from "../support/postgres.js";
import { rawRequest } from "../support/raw-gateway.js";
import { startTestGateway } from "../support/test-gateway.js";

// A server of its own: this test stops it.
const privateServer = usePrivatePostgres();

describe("a gateway whose PostgreSQL goes away", () => {
  it("reports degraded, holds a message unacknowledged until stored, then answers it", async () => {
    const gw = await startTestGateway({
      config: { state: { backend: "postgres", postgres: { url: privateServer().url, schema: "switchboard" } } },
    });
    try {
      const healthz = async () => (await rawRequest(gw.gateway.port, { path: "/healthz" })).body;
      expect(await healthz()).toEqual({ ok: true });
      const client = await gw.client();
      await privateServer().stop("immediate");
      let acknowledged = false;
      const sent = client
        .call<{ status: string }>("chat.send", { message: "while the database is away" })
        .finally(() => (acknowledged = true));
      await expect.poll(healthz, { timeout: 15_000 }).toMatchObject({ ok: true, status: "degraded" });
      expect((await healthz()).reason).toMatch(/^PostgreSQL is unreachable: /);
      expect(acknowledged).toBe(false);

      await privateServer().start();
      expect(await sent).toMatchObject({ status: "started" });
      const history = async () =>
        (
          await client.call<{ messages: Array<{ role: string; content: unknown }> }>("chat.history", {
            sessionKey: "main",
          })
        ).messages.map((m) => m.role);
      await expect.poll(history, { timeout: 15_000 }).toEqual(["user", "assistant"]);
      await expect.poll(healthz, { timeout: 15_000 }).toEqual({ ok: true });
      const changes = gw.logger.records.filter((r) => /PostgreSQL is (unreachable|reachable again)/.test(r.message));
      expect(changes.map((r) => r.message.split(":")[0])).toEqual([
        "PostgreSQL is unreachable",
        "PostgreSQL is reachable again",
      ]);
    } finally {
      await gw.close();
    }
  }, 60_000);

  it("answers a webhook 503 while the database is away, running nothing, and 202 once it is back", async () => {
    const token = "hook-token-0123456789";
    const gw = await startTestGateway({
      config: {
        hooks: { enabled: true, token },
        state: { backend: "postgres", postgres: { url: privateServer().url, schema: "switchboard" } },
      },
    });
    try {
      const base = gw.gateway.url.replace(/^ws/, "http");
      const hook = async () => {
        const response = await fetch(`${base}/hooks/agent`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
          body: JSON.stringify({ message: "nightly report", deliver: false, idempotencyKey: "night-1" }),
        });
        return {
          status: response.status,
          body: (await response.json()) as { error?: { code: string }; runId?: string },
        };
      };
      await privateServer().stop("immediate");
      await expect
        .poll(async () => (await rawRequest(gw.gateway.port, { path: "/healthz" })).body, { timeout: 15_000 })
        .toMatchObject({ status: "degraded" });
      const refused = await hook();
      expect(refused.status).toBe(503);
      expect(refused.body.error?.code).toBe("STORAGE_FAILED");

      await privateServer().start();
      await expect
        .poll(async () => (await rawRequest(gw.gateway.port, { path: "/healthz" })).body, { timeout: 15_000 })
        .toEqual({ ok: true });
      const accepted = await hook();
      expect(accepted.status).toBe(202);
      // The refused request stored nothing: the key is new, so this one is not a duplicate.
      expect(accepted.body).not.toHaveProperty("duplicate");
      const client = await gw.client();
      await expect
        .poll(
          async () =>
            (await client.call<{ status: string }>("agent.wait", { runId: accepted.body.runId, timeoutMs: 5_000 }))
              .status,
          { timeout: 15_000 },
        )
        .toBe("ok");
    } finally {
      await gw.close();
    }
  }, 60_000);
});
