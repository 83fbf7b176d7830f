// The control UI's Health view in a real Chromium, against a real gateway whose Telegram account
// talks to the fake Bot API and whose one MCP server is down.
import type { Update } from "grammy/types";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createConfiguredAdapters } from "../../adapters/index.js";
import { parseConfig } from "../../src/config/index.js";
import { type FakeTelegramServer, TEST_BOT, startFakeTelegramServer } from "../fakes/fake-telegram-server.js";
import { useBrowser } from "../support/browser.js";
import { type TestGateway, startTestGateway, tempHome } from "../support/test-gateway.js";

const browser = useBrowser();
let nextMessageId = 900;
const dm = (text: string) =>
  ({
    message: {
      message_id: nextMessageId++,
      date: 1767225600,
      chat: { id: 111, type: "private", first_name: "Ada" },
      from: { id: 111, is_bot: false, first_name: "Ada" },
      text,
    },
  }) as unknown as Omit<Update, "update_id">;

describe("Health view", { timeout: 90_000 }, () => {
  let fake: FakeTelegramServer;
  let gw: TestGateway;
  beforeAll(async () => {
    fake = await startFakeTelegramServer();
    const home = await tempHome();
    const raw = {
      channels: { telegram: { botToken: TEST_BOT.token, apiRoot: fake.apiRoot, allowFrom: ["111"] } },
      // Port 9 (discard) never answers as an MCP server: it stays failed, with its reason.
      mcp: { servers: { notes: { url: "http://127.0.0.1:9/mcp" } }, reconnectDelayMs: 60_000 },
    };
    const adapters = await createConfiguredAdapters(parseConfig(raw).config, {
      home,
      env: {},
      logger: { debug() {}, info() {}, warn() {}, error() {} },
    });
    gw = await startTestGateway({ home, config: raw, adapters });
  }, 60_000);
  afterAll(async () => {
    await gw?.close();
    await fake?.close();
  });

  it("shows the channel account, the MCP server that is down, the queues, a failure's reason and the last hour's traffic", async () => {
    fake.failNext("sendMessage", { error_code: 403, description: "Forbidden: bot was blocked by the user" });
    fake.push(dm("first"));
    fake.push(dm("second"));
    await expect.poll(() => fake.sent.length, { timeout: 20_000 }).toBe(1);
    await expect.poll(() => gw.gateway.core.gate.failures().length, { timeout: 20_000 }).toBe(1);

    const base = gw.gateway.url.replace(/^ws/, "http");
    const { page, requests } = await browser.open(`${base}/#/health`);
    const view = page.locator("#health");
    await view.locator('[data-health="verdict"][data-state="ok"]').waitFor();
    expect(await view.locator('[data-health="verdict"]').textContent()).toBe("Ready");
    expect(await page.locator("#app").isVisible()).toBe(false);

    const channel = view.locator('[data-health="channels"] li');
    expect(await channel.allTextContents()).toEqual(["telegram/defaultokconnected"]);
    const mcp = view.locator('[data-health="mcp"] li.bad');
    expect(await mcp.locator("strong").textContent()).toBe("notes");
    expect(await mcp.locator(".muted").textContent()).toMatch(/^failed: /);
    expect(await view.locator('[data-health="outbox"]').textContent()).toBe("0 waiting to be delivered");
    expect(await view.locator('[data-health="inbox"]').textContent()).toBe("0 stored and not handled yet");
    const failure = view.locator('[data-health="failures"] li');
    expect(await failure.count()).toBe(1);
    expect(await failure.locator("strong").textContent()).toBe("blocked");
    expect(await failure.textContent()).toContain("reply to telegram/default:111");
    expect(await failure.textContent()).toContain("blocked the bot");

    const chart = view.locator('[data-health="chart"]');
    expect(await chart.getAttribute("data-messages")).toBe("2");
    expect(await chart.getAttribute("data-turns")).toBe("2");
    expect(await chart.locator("svg").getAttribute("aria-label")).toBe(
      "Last hour: 2 messages, 2 turns (peak 2 per minute)",
    );
    await browser.screenshot(page, "health");

    // New traffic shows after a refresh; the page talked to nobody but its gateway.
    fake.push(dm("third"));
    await expect.poll(() => fake.sent.length, { timeout: 20_000 }).toBe(2);
    await view.locator('[data-health="refresh"]').click();
    await page.locator('[data-health="chart"][data-turns="3"]').waitFor();
    expect(requests.every((url) => url.startsWith(base) || url.startsWith(gw.gateway.url))).toBe(true);

    // Back to the sessions: the conversation of the open session comes back.
    await view.getByRole("link", { name: "Back to sessions" }).click();
    await page.locator("#app").waitFor({ state: "visible" });
    expect(await view.isHidden()).toBe(true);
  });
});
