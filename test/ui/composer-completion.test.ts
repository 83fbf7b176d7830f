import { describe, expect, it } from "vitest";
import { useBrowser } from "../support/browser.js";
import { useUiGateway } from "./ui-gateway.js";
import { connected } from "./ui-page.js";

// Leaving the box closes the completion list 100 ms later. A close armed by one blur used to fire
// after the box was entered again and a new list shown: Tab then moved the focus instead of
// completing (a full run under load: "/se" stayed "/se" with "/send" listed, in control-ui.test.ts).
const browser = useBrowser();

describe("the composer's completion list", { timeout: 90_000 }, () => {
  const ui = useUiGateway();

  it("stays shown when the box is left and entered again within the close delay, and Tab completes", async () => {
    const { page } = await browser.open(ui().pageUrl);
    await connected(page);
    const input = page.locator("#input:enabled");
    await input.click();
    await page.clock.install(); // the page's timers from here on run when the test advances the clock
    await page.locator("#session-title").click(); // leaves the box: its list closes 100 ms later
    await input.pressSequentially("/se"); // back in the box at once, the list shows "/send"
    const options = page.locator("#completions [role=option]");
    await options.first().waitFor();
    await page.clock.runFor(200); // the close armed by the blur is due
    expect(await page.locator("#completions").isVisible()).toBe(true);
    expect(await options.allInnerTexts()).toEqual([expect.stringContaining("/send on|off|inherit")]);
    await input.press("Tab");
    expect(await input.inputValue()).toBe("/send ");
    await page.context().close();
  });
});
