import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { useBrowser } from "../support/browser.js";
import { useUiGateway } from "./ui-gateway.js";
import { connected, send } from "./ui-page.js";

// The session panel (web/panel.js) as a person reads it, in real Chromium against a real gateway.
const browser = useBrowser();

/** The value the panel shows next to `term`. */
function fact(page: Page, term: string): Promise<string | null> {
  return page.locator(`#panel-facts dt:text-is("${term}") + dd`).textContent();
}

describe("session panel", { timeout: 90_000 }, () => {
  const ui = useUiGateway();

  it("shows the context estimate /status shows on the same screen, and follows it as the session grows", async () => {
    const { page } = await browser.open(ui().pageUrl);
    await connected(page);
    await send(page, `a longer message, to give the context some weight: ${"words ".repeat(400)}`);
    await page.locator("#messages .msg.assistant").filter({ hasText: "Echo:" }).waitFor();
    await send(page, "/status");
    const status = page.locator("#messages .msg.command.assistant").filter({ hasText: "Context:" });
    await status.waitFor();
    const said = /Context: (~[^·]+?) ·/.exec((await status.textContent()) ?? "")?.[1];
    expect(said).toMatch(/^~\d+(\.\d)?k of \d+k tokens in 2 messages$/);
    await expect.poll(() => fact(page, "Context")).toBe(said);
    expect(said).not.toMatch(/^~0 /);

    await send(page, "one more");
    await page.locator("#messages .msg.assistant").filter({ hasText: "Echo: one more" }).waitFor();
    await expect.poll(() => fact(page, "Context")).toMatch(/ in 4 messages$/);
    await page.context().close();
  });
});
