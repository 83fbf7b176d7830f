import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createScriptedModel } from "../fakes/scripted-model.js";
import { useBrowser } from "../support/browser.js";
import { type UiGateway, startUiGateway } from "./ui-gateway.js";
import { connected, send } from "./ui-page.js";

// The conversation (web/app.js, web/render.js) while turns run, wait and are stopped, in real
// Chromium against a real gateway whose model takes as long as the test says.
const browser = useBrowser();

/** Every bubble on screen (history and pending) with exactly `text` as what the person typed. */
const typed = (page: Page, text: string) =>
  page.locator("#log .msg.user").filter({ has: page.locator(`text="${text}"`) });

describe("control UI conversation", { timeout: 90_000 }, () => {
  let ui: UiGateway;
  const consoleErrors: string[] = [];
  let page: Page;
  beforeAll(async () => {
    const model = createScriptedModel([
      { text: "never", delayMs: 60_000 },
      { text: "never either", delayMs: 60_000 },
      { text: "kept back from the chat" },
    ]);
    ui = await startUiGateway({
      models: { "test/slow": model },
      config: { agents: { defaults: { model: "test/slow" } } },
    });
    ({ page } = await browser.open("about:blank"));
    page.on("console", (message) => message.type() === "error" && consoleErrors.push(message.text()));
    await page.goto(ui.pageUrl);
    await connected(page);
  }, 60_000);
  afterAll(async () => {
    await ui?.close();
  });

  it("loads without a console error, with an icon of its own", async () => {
    const icon = await page.evaluate<string>(`document.querySelector('link[rel="icon"]')?.href`);
    expect(icon).toBe(new URL("/ui/favicon.svg", ui.pageUrl).href);
    for (const url of [icon!, new URL("/favicon.ico", ui.pageUrl).href]) {
      const res = await fetch(url);
      expect([url, res.status, res.headers.get("content-type")]).toEqual([url, 200, "image/svg+xml"]);
    }
    expect(consoleErrors).toEqual([]);
  });

  it("shows the running message once, marked as running, while another waits behind it; Stop says what it dropped", async () => {
    await send(page, "first, runs long");
    await typed(page, "first, runs long").and(page.locator('[data-status="running"]')).waitFor();
    await send(page, "second, waits");
    await page.locator('#pending .msg[data-status="queued"]').filter({ hasText: "second, waits" }).waitFor();
    expect(await typed(page, "first, runs long").count()).toBe(1);
    expect(await typed(page, "second, waits").count()).toBe(1);

    // Watch the page: the running message must never vanish while its run ends and the history reloads.
    await page.evaluate(`(() => {
      const shown = () => [...document.querySelectorAll("#log .msg.user")].some((n) => n.firstChild?.textContent === "first, runs long");
      window.__gone = false;
      new MutationObserver(() => { if (!shown()) window.__gone = true; }).observe(document.getElementById("log"), { childList: true, subtree: true });
    })()`);
    await page.locator("#stop").click();
    await page
      .locator("#notice")
      .filter({ hasText: "The run was stopped. Dropped 1 queued message: not answered." })
      .waitFor();
    const dropped = page.locator("#pending .msg.dropped").filter({ hasText: "second, waits" });
    await dropped.filter({ hasText: "dropped by Stop before its turn began: not answered" }).waitFor();
    await page.locator("#activity").waitFor({ state: "hidden" });
    await page.locator("#messages .msg.user").filter({ hasText: "first, runs long" }).waitFor();
    expect(await typed(page, "first, runs long").count()).toBe(1);
    expect(await page.evaluate("window.__gone")).toBe(false);
    await dropped.getByRole("button", { name: "Dismiss" }).click();
    await dropped.waitFor({ state: "detached" });
  });

  it("answers /stop with how many queued messages it dropped", async () => {
    await send(page, "third, runs long");
    await typed(page, "third, runs long").and(page.locator('[data-status="running"]')).waitFor();
    await send(page, "fourth, waits");
    await page.locator('#pending .msg[data-status="queued"]').filter({ hasText: "fourth, waits" }).waitFor();
    await send(page, "/stop");
    await page
      .locator("#messages .msg.command.assistant")
      .filter({ hasText: "Agent was aborted. Dropped 1 queued message." })
      .waitFor();
    await page.locator("#pending .msg.dropped").filter({ hasText: "fourth, waits" }).waitFor();
  });

  it("marks a reply /send off kept back as not delivered, and the mark is still there after a reload", async () => {
    await send(page, "/send off");
    await page.locator('[data-send="off"][aria-pressed="true"]').waitFor();
    await send(page, "are you there?");
    const reply = page.locator("#messages .msg.assistant").filter({ hasText: "kept back from the chat" });
    await reply.waitFor();
    const mark = "not delivered: sending is off here (/send on turns it back on)";
    expect(await reply.locator(".state.withheld").textContent()).toBe(mark);
    // A command's reply is delivered whatever /send says: it carries no mark.
    expect(await page.locator("#messages .msg.command .state.withheld").count()).toBe(0);
    await page.reload();
    await connected(page);
    await reply.locator(".state.withheld").filter({ hasText: mark }).waitFor();
    expect(consoleErrors).toEqual([]);
  });
});
