import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createScriptedModel } from "../fakes/scripted-model.js";
import { type RecordedPage, useBrowser } from "../support/browser.js";
import { type UiGateway, startUiGateway } from "./ui-gateway.js";

// Browser tests on a loaded 2-core CI machine: generous limits, no timing assertions.
const browser = useBrowser();

async function connected(page: Page): Promise<void> {
  await page.locator('#conn[data-state="connected"]').waitFor();
}

async function send(page: Page, text: string): Promise<void> {
  await page.locator("#input").fill(text);
  await page.locator("#input").press("Enter");
}

const assistant = (page: Page, text: string) => page.locator("#messages .msg.assistant").filter({ hasText: text });

/** What the conversation shows, as text, once nothing is pending. */
async function conversation(page: Page): Promise<string> {
  await page.locator("#pending .msg").first().waitFor({ state: "detached" });
  return (await page.locator("#messages").textContent()) ?? "";
}

describe("control UI on a loopback gateway", { timeout: 90_000 }, () => {
  let ui: UiGateway;
  let main: RecordedPage;
  beforeAll(async () => {
    ui = await startUiGateway();
    main = await browser.open(ui.pageUrl);
    await connected(main.page);
  }, 60_000);
  afterAll(async () => {
    await ui?.close();
  });

  it("opens the main session, sends a multi-line message and shows the reply as markdown", async () => {
    const { page } = main;
    await page.locator("#input").fill("hello **world**");
    await page.locator("#input").press("Shift+Enter");
    await page.locator("#input").pressSequentially("second line");
    expect(await page.locator("#input").inputValue()).toBe("hello **world**\nsecond line");
    await page.locator("#input").press("Enter");
    const reply = assistant(page, "Echo: hello");
    await reply.waitFor();
    expect(await reply.locator("strong").textContent()).toBe("world");
    expect(await page.locator("#messages .msg.user").last().textContent()).toBe("hello **world**\nsecond line");
    expect(await page.locator("#session-title").textContent()).toContain("agent:main:main");
    expect(await page.locator("#input").inputValue()).toBe("");
  });

  it("shows a spawned sub-agent's announce, the tool call as one line and a command's answer, all still there after a reload", async () => {
    const { page } = main;
    await send(page, "spawn: count to three");
    const announce = page.locator("#messages .msg.announce");
    await announce.waitFor();
    expect(await announce.textContent()).toContain("Sub-agent");
    expect(await page.locator("#messages details.tool summary").filter({ hasText: "sessions_spawn ->" }).count()).toBe(
      1,
    );
    await send(page, "/status");
    await page.locator("#messages .msg.command.assistant").filter({ hasText: "Session: agent:main:main" }).waitFor();
    await send(page, "list sessions");
    await page
      .locator("#messages details.tool summary")
      .filter({ hasText: /^sessions_list -> \d+ rows$/ })
      .waitFor();
    await browser.screenshot(page, "conversation");
    const before = await conversation(page);

    await page.reload();
    await connected(page);
    await page.locator("#messages .msg.announce").waitFor();
    expect(await conversation(page)).toBe(before);
    expect(await page.locator("#subagents li").first().textContent()).toContain("count to three");
  });

  it("shows the same conversation in two pages on one session, live", async () => {
    const second = await browser.open(main.page.url());
    await connected(second.page);
    await send(main.page, "from the first page");
    await assistant(second.page, "Echo: from the first page").waitFor();
    await send(second.page, "/status");
    await main.page.locator("#messages .msg.command.user").filter({ hasText: "/status" }).last().waitFor();
    await assistant(main.page, "Echo: from the first page").waitFor();
    await expect.poll(async () => (await conversation(second.page)) === (await conversation(main.page))).toBe(true);
    await second.page.context().close();
  });

  it("renders raw HTML and javascript: links from model output and from people inert", async () => {
    const { page } = main;
    await send(page, '<img src=x onerror="window.__xss=1"> and <script>window.__xss=2</script>');
    await assistant(page, "Echo:").filter({ hasText: "and" }).last().waitFor();
    await send(page, '[click me](javascript:window.__xss=3) <a href="javascript:window.__xss=4">or me</a>');
    const reply = assistant(page, "click me").last();
    await reply.waitFor();
    await reply.getByText("click me").click();
    await reply.getByText("or me").click();
    expect(await page.locator("#messages img, #messages script, #messages [onerror]").count()).toBe(0);
    expect(await page.locator('#messages a[href^="javascript"]').count()).toBe(0);
    // What the person typed is shown as the text it was, not as markup.
    expect(await page.locator("#messages .msg.user").filter({ hasText: "<img src=x" }).count()).toBe(1);
    expect(await page.evaluate("window.__xss")).toBeUndefined();
  });

  it("completes slash commands from the command table", async () => {
    const { page } = main;
    await page.locator("#input").fill("");
    await page.locator("#input").pressSequentially("/se");
    const options = page.locator("#completions [role=option]");
    await options.first().waitFor();
    expect(await options.allInnerTexts()).toEqual([expect.stringContaining("/send on|off|inherit")]);
    await page.locator("#input").press("Tab");
    expect(await page.locator("#input").inputValue()).toBe("/send ");
    await page.locator("#input").fill("");
  });

  it("turns delivery off with the panel's send policy button, as the /send off command", async () => {
    const { page } = main;
    await page.locator('[data-send="off"]').click();
    await page.locator('[data-send="off"][aria-pressed="true"]').waitFor();
    expect(await page.locator("#send-effective").textContent()).toContain("Delivery is off");
    await page.locator("#messages .msg.command.user").filter({ hasText: "/send off" }).waitFor();
    const client = await ui.client();
    const info = (await client.call("sessions.get", { key: "main" })) as { session: { sendPolicy?: string } };
    expect(info.session.sendPolicy).toBe("deny");
    await page.locator('[data-send="inherit"]').click();
    await page.locator('[data-send="inherit"][aria-pressed="true"]').waitFor();
  });

  it("lists sessions, creates a labelled one without typing a key, and filters by kind and search", async () => {
    const { page } = main;
    await page.getByRole("button", { name: "New session" }).click();
    await page.getByLabel("Label (optional)").fill("research");
    await page.getByRole("button", { name: "Create" }).click();
    await page.locator('#session-list button[aria-current="true"]').filter({ hasText: "research" }).waitFor();
    expect(await page.locator("#session-title").textContent()).toMatch(/^research · agent:main:webchat:dm:/);
    await send(page, "hi research");
    await assistant(page, "Echo: hi research").waitFor();
    await page.locator("#session-kind").selectOption("main");
    await expect
      .poll(() => page.locator("#session-list button").allInnerTexts())
      .toEqual([expect.stringMatching(/^main/)]);
    await page.locator("#session-kind").selectOption("");
    await page.locator("#session-search").fill("resea");
    await expect.poll(() => page.locator("#session-list button").count()).toBe(1);
    await page.locator("#session-search").fill("");
    await page.locator("#session-list button").filter({ hasText: /^main/ }).click();
    await page.locator("#session-title").filter({ hasText: "agent:main:main" }).waitFor();
    await page.locator("#messages .msg.announce").waitFor();
  });

  it("pages back through a long history", async () => {
    const client = await ui.client();
    for (let i = 0; i < 26; i++) {
      const { runId } = (await client.call("chat.send", {
        sessionKey: "agent:main:webchat:dm:paging",
        message: `m${i}`,
      })) as {
        runId: string;
      };
      await client.call("agent.wait", { runId, timeoutMs: 30_000 });
    }
    const { page } = await browser.open(`${ui.pageUrl}#/session/${encodeURIComponent("agent:main:webchat:dm:paging")}`);
    await connected(page);
    await assistant(page, "Echo: m25").waitFor();
    expect(await assistant(page, "Echo: m0").count()).toBe(0);
    await page.getByRole("button", { name: "Load older messages" }).click();
    await assistant(page, "Echo: m0").waitFor();
    expect(await page.locator("#messages .msg.user").count()).toBe(26);
    await page.locator("#load-older").waitFor({ state: "hidden" });
    await page.context().close();
  });

  it("fits a phone-sized screen, with sessions and the panel behind buttons", async () => {
    const phone = await browser.open(main.page.url(), { width: 390, height: 844 });
    const { page } = phone;
    await connected(page);
    expect(await page.locator("#sidebar").isVisible()).toBe(false);
    await page.getByRole("button", { name: "Sessions", exact: true }).click();
    await page.locator("#sidebar").waitFor({ state: "visible" });
    await page.keyboard.press("Escape");
    await page.locator("#sidebar").waitFor({ state: "hidden" });
    const overflow = await page.evaluate("document.documentElement.scrollWidth > window.innerWidth");
    expect(overflow).toBe(false);
    await browser.screenshot(page, "phone");
    await page.context().close();
  });

  it("disables the composer while the gateway is down, keeps the draft, and sends it once the gateway is back", async () => {
    const { page } = main;
    await page.locator("#input").fill("written while the gateway restarts");
    await ui.stop();
    await page.locator('#conn[data-state="reconnecting"]').waitFor();
    expect(await page.locator("#input").isDisabled()).toBe(true);
    expect(await page.locator("#notice").textContent()).toContain("Your draft is kept");
    await browser.screenshot(page, "reconnecting");
    await ui.restart();
    await connected(page);
    expect(await page.locator("#input").inputValue()).toBe("written while the gateway restarts");
    await page.locator("#input").press("Enter");
    await assistant(page, "Echo: written while the gateway restarts").waitFor();
  }, 60_000);

  it("makes no request to any host but the gateway", () => {
    const origin = new URL(ui.pageUrl).host;
    const elsewhere = main.requests.filter((url) => new URL(url).host !== origin);
    expect(main.requests.length).toBeGreaterThan(5);
    expect(elsewhere).toEqual([]);
  });
});

describe("control UI on a token-protected gateway", { timeout: 90_000 }, () => {
  const token = "a-long-enough-gateway-token-123";
  let ui: UiGateway;
  beforeAll(async () => {
    ui = await startUiGateway({ token });
  }, 60_000);
  afterAll(async () => {
    await ui?.close();
  });

  it("asks for the token instead of retrying, refuses a wrong one, then works and keeps the token only when asked", async () => {
    const { page, requests } = await browser.open(ui.pageUrl);
    await page.locator('#conn[data-state="unauthorized"]').waitFor();
    await page.getByRole("heading", { name: "Enter the gateway token" }).waitFor();
    await browser.screenshot(page, "token-prompt");
    // No reconnect loop: the page waits for the person, it does not hammer the gateway.
    await page.waitForTimeout(2_000);
    expect(requests.filter((url) => url.startsWith("ws:"))).toHaveLength(1);

    await page.getByLabel("Gateway token", { exact: true }).fill("wrong-token-wrong-token");
    await page.getByRole("button", { name: "Connect" }).click();
    await page.locator("#auth-reason").filter({ hasText: "refused this token" }).waitFor();

    await page.getByLabel("Gateway token", { exact: true }).fill(token);
    await page.getByRole("button", { name: "Connect" }).click();
    await connected(page);
    await send(page, "hello with a token");
    await assistant(page, "Echo: hello with a token").waitFor();
    expect(await page.evaluate("JSON.stringify(localStorage)")).not.toContain(token);

    await page.reload();
    await page.locator('#conn[data-state="unauthorized"]').waitFor();
    await page.getByLabel("Gateway token", { exact: true }).fill(token);
    await page.getByLabel("Remember on this browser").check();
    await page.getByRole("button", { name: "Connect" }).click();
    await connected(page);
    await page.reload();
    await connected(page);
    await assistant(page, "Echo: hello with a token").waitFor();
    await page.context().close();
  }, 60_000);
});

describe("control UI while a run lasts", { timeout: 90_000 }, () => {
  let ui: UiGateway;
  beforeAll(async () => {
    const parent = createScriptedModel([
      { toolCalls: [{ name: "sessions_spawn", input: { task: "dig slowly", label: "digger", model: "child" } }] },
      { text: "spawned" },
      { text: "this takes long", delayMs: 60_000 },
    ]);
    const child = createScriptedModel([{ text: "slow child", delayMs: 60_000 }]);
    ui = await startUiGateway({
      models: { "test/parent": parent, "test/child": child },
      config: { agents: { defaults: { model: "test/parent" } }, models: { aliases: { child: "test/child" } } },
    });
  }, 60_000);
  afterAll(async () => {
    await ui?.close();
  });

  it("shows the running sub-agent with a Stop button, a pending message while the turn runs, and Stop ends it", async () => {
    const { page } = await browser.open(ui.pageUrl);
    await connected(page);
    await send(page, "research slowly");
    await assistant(page, "spawned").waitFor();
    const stopChild = page.getByRole("button", { name: "Stop sub-agent digger" });
    await stopChild.waitFor();
    await send(page, "and something slow");
    // The running message is in the history by now, marked there (not shown a second time below it).
    await page.locator('#log .msg.user[data-status="running"]').filter({ hasText: "and something slow" }).waitFor();
    await page.locator("#activity").waitFor({ state: "visible" });
    await browser.screenshot(page, "running");
    await page.locator("#stop").click();
    await page.locator("#activity").waitFor({ state: "hidden" });
    await page.locator("#notice").filter({ hasText: "was stopped" }).waitFor();
    await page.locator("#pending .msg").first().waitFor({ state: "detached" });
    expect(await page.locator("#messages .msg.user").filter({ hasText: "and something slow" }).count()).toBe(1);

    await stopChild.click();
    await page.locator("#subagents li").filter({ hasText: "digger" }).filter({ hasNotText: "running" }).waitFor();
    expect(await page.getByRole("button", { name: "Stop sub-agent digger" }).count()).toBe(0);
    await page.context().close();
  }, 60_000);
});

describe("control UI when the connection drops mid-request", { timeout: 90_000 }, () => {
  let ui: UiGateway;
  beforeAll(async () => {
    ui = await startUiGateway();
  }, 60_000);
  afterAll(async () => {
    await ui?.close();
  });

  /**
   * Makes the page's next `chat.send` drop its connection, as a network failure would: before the
   * frame leaves (`before`), or right after it left, so the gateway gets it and the answer is lost.
   */
  async function dropOnNextSend(page: Page, when: "before" | "after"): Promise<void> {
    await page.evaluate(`(() => {
      const original = WebSocket.prototype.send;
      let dropped = false;
      WebSocket.prototype.send = function (data) {
        const hit = !dropped && String(data).includes('"chat.send"');
        if (hit) dropped = true;
        if (hit && ${JSON.stringify(when)} === "before") return this.close();
        original.call(this, data);
        if (hit) this.close();
      };
    })()`);
  }

  it("keeps a message the connection lost before the gateway got it, shows it as not sent, and sends it on reconnect", async () => {
    const { page } = await browser.open(ui.pageUrl);
    await connected(page);
    await dropOnNextSend(page, "before");
    await send(page, "sent into a dead connection");
    await page.locator('#pending .msg[data-status="offline"]').waitFor();
    await assistant(page, "Echo: sent into a dead connection").waitFor();
    expect(await page.locator("#messages .msg.user").filter({ hasText: "sent into a dead connection" }).count()).toBe(
      1,
    );
    await page.context().close();
  }, 60_000);

  it("runs a message whose answer the connection lost once, though the page sends it again", async () => {
    const { page } = await browser.open(ui.pageUrl);
    await connected(page);
    await dropOnNextSend(page, "after");
    await send(page, "answer lost on the way back");
    await assistant(page, "Echo: answer lost on the way back").waitFor();
    await page.locator("#pending .msg").first().waitFor({ state: "detached" });
    const client = await ui.client();
    const history = (await client.call("chat.history", { sessionKey: "main" })) as {
      messages: Array<{ role: string; content: unknown }>;
    };
    const sent = history.messages.filter((m) => m.role === "user" && m.content === "answer lost on the way back");
    expect(sent).toHaveLength(1);
    await page.context().close();
  }, 60_000);

  it("says the gateway is too old when it lacks a method the page needs, and stops retrying", async () => {
    const { page } = await browser.open("about:blank");
    let sockets = 0;
    await page.routeWebSocket(/.*/, (ws) => {
      sockets += 1;
      const server = ws.connectToServer();
      ws.onMessage((message) => server.send(message));
      server.onMessage((message) => {
        const frame = JSON.parse(String(message)) as { payload?: { methods?: string[] } };
        if (frame.payload?.methods) frame.payload.methods = frame.payload.methods.filter((m) => m !== "sessions.get");
        ws.send(JSON.stringify(frame));
      });
    });
    await page.goto(ui.pageUrl);
    await page.locator('#conn[data-state="too-old"]').waitFor();
    expect(await page.locator("#too-old-reason").textContent()).toContain("sessions.get");
    await page.waitForTimeout(2_000);
    expect(sockets).toBe(1);
    expect(await page.locator("#app").isVisible()).toBe(false);
    await page.context().close();
  }, 60_000);
});
