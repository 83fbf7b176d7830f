// What a stopping gateway's sink does with a platform message (docs/architecture.md "Stopping"):
// during the drain it stores it unhandled (the next start replays it), except a native command,
// whose interaction ends with the process; once the adapters stopped it refuses (unstored).
import { afterEach, describe, expect, it } from "vitest";
import type { CommandInteraction } from "../../src/delivery/channel-adapter.js";
import { InboxWriteError } from "../../src/inbound/inbox.js";
import type { InboundMessage } from "../../src/routing/inbound-message.js";
import { createFakeChannelAdapter } from "../fakes/fake-channel-adapter.js";
import { ADA, telegramDm } from "../support/telegram-dm.js";
import { startTestGateway, tempHome } from "../support/test-gateway.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

let nextId = 1;
const dm = (text: string, command?: InboundMessage["command"]): InboundMessage => ({
  ...telegramDm(text, { messageId: `m${nextId++}`, sender: ADA }),
  ...(command && { command }),
});
const config = { channels: { telegram: { dmPolicy: "open" } } };

/** A fake Telegram adapter whose sink stays reachable after its stop (as a straggling platform event would). */
function keptSink() {
  const fake = createFakeChannelAdapter({ id: "telegram", nativeCommands: true });
  let sink: Parameters<typeof fake.start>[0] | undefined;
  const adapter = {
    ...fake,
    start: (next: Parameters<typeof fake.start>[0], context: Parameters<typeof fake.start>[1]) => {
      sink = next;
      return fake.start(next, context);
    },
  };
  return { fake, adapter, receive: (message: InboundMessage, i?: CommandInteraction) => sink!(message, i) };
}

const interaction: CommandInteraction = { defer: async () => undefined, reply: async () => undefined };

describe("a stopping gateway's sink", () => {
  it("stores a message during the drain for the next start, refuses a native command then, and refuses anything once its adapters stopped", async () => {
    const home = await tempHome();
    const first = keptSink();
    const gw = await startTestGateway({ home, config, adapters: [first.adapter] });
    const release = first.fake.hold();
    await first.receive(dm("before the stop"));
    await expect.poll(() => first.fake.calls.length).toBe(1);
    // Its reply is held: the stop's drain waits for it.
    const closed = gw.close();
    await expect.poll(() => gw.gateway.core.health().phase).toBe("draining");
    await expect(first.receive(dm("during the drain"))).resolves.toBeUndefined();
    const command = first.receive(dm("/status", { name: "status", args: "" }), interaction);
    await expect(command).rejects.toBeInstanceOf(InboxWriteError);
    release();
    await closed;
    await expect(first.receive(dm("after the stop"))).rejects.toBeInstanceOf(InboxWriteError);
    expect(first.fake.texts()).toEqual(["Echo: before the stop"]);

    const second = createFakeChannelAdapter({ id: "telegram" });
    const next = await startTestGateway({ home, config, adapters: [second] });
    cleanups.push(next.close);
    await next.gateway.core.idle();
    expect(second.texts()).toEqual(["Echo: during the drain"]);
  });
});
