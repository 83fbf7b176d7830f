// What a person does on the control UI page, for the browser tests.
import type { Page } from "playwright-core";

/** Waits until the page says it is connected. */
export async function connected(page: Page): Promise<void> {
  await page.locator('#conn[data-state="connected"]').waitFor();
}

/** Types `text` into the composer and presses Enter. */
export async function send(page: Page, text: string): Promise<void> {
  await page.locator("#input").fill(text);
  await page.locator("#input").press("Enter");
}
