// The set-up the takeover e2e tests share (test/e2e/cluster-run-results.test.ts,
// cluster-sessions-send.test.ts): the cluster harness on the test PostgreSQL, a fake Telegram server
// for the gateways and WebSocket clients, each closed after every test of the calling file.
import { afterEach } from "vitest";
import { type GatewayClient, connectGateway } from "../../src/cli/gateway-client.js";
import { type FakeTelegramServer, startFakeTelegramServer } from "../fakes/fake-telegram-server.js";
import { useCluster } from "./cluster-harness.js";
import { until } from "./gateway-child.js";
import { usePostgres } from "./postgres.js";

/** `startCluster`, `fakeTelegram()` and `client(port)` for one test file (call it where vitest registers hooks). */
export function useClusterClients() {
  const startCluster = useCluster(usePostgres());
  const fakes: FakeTelegramServer[] = [];
  const clients: GatewayClient[] = [];
  afterEach(async () => {
    // A client of a gateway the test killed may fail to close: nothing is left to close then.
    for (const client of clients.splice(0)) await client.close().catch(() => undefined);
    for (const fake of fakes.splice(0)) await fake.close();
  });
  const client = async (port: number): Promise<GatewayClient> => {
    const connected = await connectGateway(`ws://127.0.0.1:${port}`);
    clients.push(connected);
    return connected;
  };
  return {
    startCluster,
    /** A fake Telegram server (the gateways' `SB_API_ROOT`). */
    async fakeTelegram(): Promise<FakeTelegramServer> {
      const fake = await startFakeTelegramServer();
      fakes.push(fake);
      return fake;
    },
    /** A client of the gateway listening on `port`. */
    client,
    /**
     * A client of `port`, a 503 retried for up to 10 s (`cluster.owners: "many"`: the global holder
     * between two cores answers 503 with Retry-After 1).
     */
    async servingClient(port: number): Promise<GatewayClient> {
      let connected: GatewayClient | undefined;
      await until(async () => {
        connected = await client(port).catch((err: unknown) => {
          if (!String(err).includes("503")) throw err;
          return undefined;
        });
        return connected !== undefined;
      }, 10_000);
      return connected!;
    },
  };
}
