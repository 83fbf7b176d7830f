// The session panel shows a reply the outbox keeps retrying (the platform is unreachable), in Chromium.
import { afterAll, describe, expect, it } from "vitest";
import { InboundMessageSchema } from "../../src/routing/inbound-message.js";
import { createFakeChannelAdapter } from "../fakes/fake-channel-adapter.js";
import { useBrowser } from "../support/browser.js";
import { type UiGateway, startUiGateway } from "./ui-gateway.js";

const browser = useBrowser();
const KEY = "agent:main:telegram:dm:42";

interface PanelInfo {
  pending: Array<{ kind: string; channel: string; to?: string; attempts: number; error?: string }>;
}

describe("control UI panel: replies waiting to be delivered", { timeout: 90_000 }, () => {
  let ui: UiGateway | undefined;
  afterAll(async () => {
    await ui?.close();
  });

  it("lists a reply that Telegram keeps refusing with a retryable error, with its tries and the last error", async () => {
    const telegram = createFakeChannelAdapter({ id: "telegram" });
    telegram.failNext(1_000_000, "retryable"); // unreachable for the whole test
    ui = await startUiGateway({
      adapters: [telegram],
      config: { channels: { telegram: { dmPolicy: "open" } }, session: { dmScope: "per-channel-peer" } },
    });
    await telegram.receive(
      InboundMessageSchema.parse({
        channel: "telegram",
        chat: { type: "direct", id: "42" },
        sender: { id: "42", name: "Ada" },
        messageId: "m1",
        text: "are you there?",
      }),
    );
    const client = await ui.client();
    await expect
      .poll(async () => ((await client.call("sessions.get", { key: KEY })) as PanelInfo).pending, { timeout: 20_000 })
      .toMatchObject([{ kind: "reply", channel: "telegram", to: "42", error: expect.stringContaining("network") }]);

    const { page } = await browser.open(`${ui.pageUrl}#/session/${encodeURIComponent(KEY)}`);
    const item = page.locator("#pending-deliveries li").filter({ hasText: "reply to telegram:42" });
    await item.waitFor();
    const text = (await item.textContent()) ?? "";
    expect(text).toMatch(/\d+ failed tr(y|ies), retrying/);
    expect(text).toContain("network: fake: network hiccup");
    expect(await page.locator("#failures li").allTextContents()).toEqual(["none"]);
    await page.context().close();
  });
});
