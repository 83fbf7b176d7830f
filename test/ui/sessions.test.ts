import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { useBrowser } from "../support/browser.js";
import { useUiGateway } from "./ui-gateway.js";
import { connected, send } from "./ui-page.js";

// The session list (web/sessions.js) as a person reads it, in real Chromium against a real gateway.
const browser = useBrowser();

/** How many lines of text a list row's name takes on screen. */
async function linesOf(page: Page, key: string): Promise<number> {
  return page.evaluate(`(() => {
    const name = document.querySelector('#session-list button[data-key="${key}"] .name');
    const style = getComputedStyle(name);
    const line = Number.parseFloat(style.lineHeight) || Number.parseFloat(style.fontSize) * 1.2;
    return Math.round(name.getBoundingClientRect().height / line);
  })()`);
}

describe("session list", { timeout: 90_000 }, () => {
  const ui = useUiGateway();

  it("says a list is empty because nothing exists yet, and says so differently when a search finds nothing", async () => {
    const { page } = await browser.open(ui().pageUrl);
    await connected(page);
    const empty = page.locator("#session-list li.muted");
    await empty.filter({ hasText: "No sessions yet" }).waitFor();
    expect(await empty.textContent()).not.toContain("match");
    await send(page, "hello");
    await page.locator("#session-list button").first().waitFor();
    await page.locator("#session-search").fill("no such session anywhere");
    await empty.filter({ hasText: "No sessions match this search or kind." }).waitFor();
    await page.locator("#session-search").fill("");
    await page.locator("#session-list button").first().waitFor();
    await page.context().close();
  });

  it("names a sub-agent by its task and the main session as such, each on one line, with the key on hover", async () => {
    const { page } = await browser.open(ui().pageUrl);
    await connected(page);
    await send(page, "spawn: count to three and report back to the main session");
    await page.locator("#messages .msg.announce").waitFor();
    // The list is fetched again after each event of the open session.
    const sub = page.locator('#session-list button[data-key^="agent:main:subagent:"]');
    await sub.waitFor();
    const subKey = (await sub.getAttribute("data-key"))!;
    // The kind badge, then the title: the task, cut to one line.
    expect(await sub.locator(".name").textContent()).toMatch(/^subagentSub-agent: count to three and report back/);
    expect(await sub.locator(".name").textContent()).not.toContain(subKey);
    expect(await sub.getAttribute("title")).toBe(subKey);
    expect(await linesOf(page, subKey)).toBe(1);
    const main = page.locator('#session-list button[data-key="agent:main:main"]');
    expect(await main.locator(".name").textContent()).toBe("mainMain session");
    expect(await main.locator(".name").textContent()).not.toContain("owner");
    expect(await page.locator("#session-title").textContent()).toBe("Main session · agent:main:main");
    await page.locator("#session-search").fill("count to three");
    await expect.poll(() => page.locator("#session-list button").count()).toBe(1);
    await page.context().close();
  });
});
