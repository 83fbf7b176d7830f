// A stop that lands in @discordjs/ws's own reconnect (adapters/discord/close-shards.ts): the shard
// sits Idle for 500 ms after a dropped connection, where a destroy is a no-op, then connects again.
// The stop must still leave no connection behind and never close with 1000 (which ends the
// session): the next start resumes it and gets what was sent while the gateway was stopped.
import { describe, expect, it } from "vitest";
import { until } from "../../support/gateway-child.js";
import { useDiscordHarness } from "./discord-harness.js";

const harness = useDiscordHarness();

describe("a stop during discord.js's own reconnect", () => {
  it("closes the connection the reconnect opens with 4200 and leaves none: the next start resumes the session", async () => {
    const h = await harness();
    h.fake.dispatch("MESSAGE_CREATE", h.fake.dm("before the drop"));
    await h.waitForReceived(1);
    // A network cut: the shard waits 500 ms, then RESUMEs on a new connection.
    h.fake.dropConnections();
    await until(() => h.logger.records.some((r) => r.message === "discord gateway reconnecting"), 5_000);
    await h.adapter.stop();
    // The drop (1006), then the reconnect's connection, closed by the stop (not left open, not 1000).
    await until(() => h.fake.closeCodes().length === 2, 5_000);
    expect(h.fake.closeCodes()).toEqual([1006, 4200]);
    expect(h.fake.connections()).toBe(0);
    h.fake.dispatch("MESSAGE_CREATE", h.fake.dm("while stopped"));
    await h.start();
    expect((await h.waitForReceived(2)).map((r) => r.message.text)).toEqual(["before the drop", "while stopped"]);
    // Its own session, then the stopped one resumed (the reconnect's RESUME may or may not have gone out before the close).
    expect(h.fake.logins.slice(-2).map((l) => l.kind)).toEqual(["identify", "resume"]);
    expect(h.fake.secondConnections()).toBe(0);
  });
});
