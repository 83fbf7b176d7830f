import { describe, expect, it } from "vitest";
import { useBrowser } from "../support/browser.js";
import { useUiGateway } from "./ui-gateway.js";
import { connected, send } from "./ui-page.js";

// A message typed in the moment between "connected" and the first session opening had no session
// to go to: it was sent with an empty key, refused, and shown nowhere (a full test run under load
// lost one that way). The composer now takes text only once a session is open.
const browser = useBrowser();

describe("the composer at page load", { timeout: 90_000 }, () => {
  const ui = useUiGateway();

  it("stays disabled while connected until the first session is open, then sends to it", async () => {
    const { page } = await browser.open("about:blank");
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let historyId: string | undefined;
    await page.routeWebSocket(/.*/, (ws) => {
      const server = ws.connectToServer();
      ws.onMessage((message) => {
        const frame = JSON.parse(String(message)) as { id?: string; method?: string };
        if (frame.method === "chat.history" && historyId === undefined) historyId = frame.id;
        server.send(message);
      });
      server.onMessage((message) => {
        const frame = JSON.parse(String(message)) as { type?: string; id?: string };
        // The first session's history is held back until the test has looked at the composer.
        if (frame.type === "res" && frame.id !== undefined && frame.id === historyId)
          void held.then(() => ws.send(message));
        else ws.send(message);
      });
    });
    await page.goto(ui().pageUrl);
    await connected(page);
    await expect.poll(() => historyId).toBeDefined();
    expect(await page.locator("#input").isDisabled()).toBe(true);
    expect(await page.locator("#send").isDisabled()).toBe(true);
    release();
    await page.locator("#input:enabled").waitFor();
    expect(await page.locator("#session-title").textContent()).toContain("agent:main:main");
    await send(page, "typed as soon as it could be");
    await page.locator("#messages .msg.assistant", { hasText: "Echo: typed as soon as it could be" }).waitFor();
    await page.context().close();
  });
});
