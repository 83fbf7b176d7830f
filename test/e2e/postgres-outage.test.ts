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
});
