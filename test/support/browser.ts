// One headless Chromium per test file (Debian's `chromium` package; .ci/run installs it), driven
// by playwright-core. Pages record every request they make, so a test can prove the control UI
// talks to nobody but its gateway.
import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { type Browser, type Page, chromium } from "playwright-core";
import { afterAll, beforeAll } from "vitest";

/** Where Chromium is looked for; SWITCHBOARD_CHROMIUM overrides it. */
const CHROMIUM_PATH = process.env.SWITCHBOARD_CHROMIUM ?? "/usr/bin/chromium";

/** Screenshots of the main states land here during a test run (git-ignored; docs/screenshots holds the published ones). */
const SCREENSHOT_DIR = path.resolve(import.meta.dirname, "../../test-results/screenshots");

/** A page and every URL it requested (HTTP and WebSocket). */
export interface RecordedPage {
  page: Page;
  requests: string[];
}

/**
 * Starts Chromium; a start that hangs (seen once in a whole-suite run: no window within 60 s, while
 * the same file alone starts it in about a second) is given up after 25 s and tried once more.
 */
async function launchChromium(args: readonly string[]): Promise<Browser> {
  // --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
  const launch = () =>
    chromium.launch({
      executablePath: CHROMIUM_PATH,
      headless: true,
      args: ["--no-sandbox", ...args],
      timeout: 25_000,
    });
  try {
    return await launch();
  } catch (err) {
    process.stderr.write(`Chromium did not start (${(err as Error).message.split("\n")[0]}); trying once more\n`);
    return launch();
  }
}

/**
 * Launches Chromium before the file's tests and closes it after; `open(url)` gives a fresh page.
 * `args`: more Chromium flags, e.g. `--host-resolver-rules=MAP rebind.example 127.0.0.1` for a DNS-rebound name.
 */
export function useBrowser(args: readonly string[] = []) {
  let browser: Browser | undefined;
  beforeAll(async () => {
    if (!existsSync(CHROMIUM_PATH))
      throw new Error(
        `Chromium not found at ${CHROMIUM_PATH}: install it (apt-get install -y chromium) or set SWITCHBOARD_CHROMIUM`,
      );
    await mkdir(SCREENSHOT_DIR, { recursive: true });
    browser = await launchChromium(args);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
  });
  return {
    async open(url: string, viewport = { width: 1280, height: 800 }): Promise<RecordedPage> {
      const context = await browser!.newContext({ viewport });
      const page = await context.newPage();
      page.setDefaultTimeout(30_000);
      const requests: string[] = [];
      page.on("request", (request) => requests.push(request.url()));
      page.on("websocket", (socket) => requests.push(socket.url()));
      await page.goto(url);
      return { page, requests };
    },
    /** Saves a screenshot of `page` as `<name>.png` in {@link SCREENSHOT_DIR}. */
    async screenshot(page: Page, name: string): Promise<void> {
      await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}.png`) });
    },
  };
}
