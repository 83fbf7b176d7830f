import { afterEach, describe, expect, it } from "vitest";
import { cli, tempHome } from "../support/fake-cli-io.js";
import { startTestGateway } from "../support/test-gateway.js";

type TestGateway = Awaited<ReturnType<typeof startTestGateway>>;
let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close();
  gw = undefined;
});

describe("switchboard tools invoke", () => {
  it("runs a session tool through the gateway and prints its JSON result", async () => {
    const home = await tempHome();
    gw = await startTestGateway({ home });
    const client = await gw.client();
    const { runId } = await client.call<{ runId: string }>("chat.send", { message: "hi" });
    await client.call("agent.wait", { runId });
    const { code, stdout } = await cli(
      ["tools", "invoke", "sessions_list", "--args", '{"messageLimit":1}', "--url", gw.gateway.url],
      { home },
    );
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({
      count: 1,
      sessions: [{ key: "main", kind: "main", messages: [{ role: "assistant" }] }],
    });
  });

  it("exits 1 with the structured error for bad arguments, and 2 for arguments that are not JSON", async () => {
    const home = await tempHome();
    gw = await startTestGateway({ home });
    const bad = await cli(["tools", "invoke", "sessions_history", "--args", "{}", "--url", gw.gateway.url], { home });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("INVALID_REQUEST: invalid arguments for sessions_history: sessionKey");
    const notJson = await cli(["tools", "invoke", "sessions_list", "--args", "{oops", "--url", gw.gateway.url], {
      home,
    });
    expect(notJson.code).toBe(2);
    expect(notJson.stderr).toContain("--args is not JSON");
  });
});

describe("switchboard gateway call", () => {
  it("prints a method's result, and CODE: message for an error", async () => {
    const home = await tempHome();
    gw = await startTestGateway({ home });
    const ok = await cli(["gateway", "call", "agents.list", "--url", gw.gateway.url], { home });
    expect(JSON.parse(ok.stdout)).toEqual({
      agents: [{ id: "main", name: "main", default: true, model: "offline/echo" }],
    });
    const failed = await cli(
      ["gateway", "call", "sessions.resolve", "--params", '{"key":"agent:main:dm:nope"}', "--url", gw.gateway.url],
      { home },
    );
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain("NOT_FOUND: No session found: agent:main:dm:nope");
  });
});

describe("a session key named on the command line", () => {
  const stray = "agent:main:../../stray";
  it.each([
    ["cron add --session", ["cron", "add", "--name", "x", "--every", "1h", "--message", "hi", "--session", stray]],
    ["tools invoke --session", ["tools", "invoke", "sessions_list", "--args", "{}", "--session", stray]],
    ["chat --session", ["chat", "--session", stray]],
    ["sessions.patch", ["gateway", "call", "sessions.patch", "--params", JSON.stringify({ key: stray, label: "x" })]],
    [
      "cron add --session (a shape no grammar produces)",
      ["cron", "add", "--name", "x", "--every", "1h", "--message", "hi", "--session", "agent:main:nonsense"],
    ],
    // Peer ids Telegram never produces (numeric ids only): issue #30.
    ["chat --session (a Telegram peer id with a space)", ["chat", "--session", "agent:main:telegram:dm:111 x"]],
    [
      "sessions.patch (a Telegram group id that is markup)",
      ["gateway", "call", "sessions.patch", "--params", JSON.stringify({ key: "agent:main:telegram:group:<script>" })],
    ],
  ])("is refused by %s with the one not-a-session-key error, and nothing is created", async (_name, argv) => {
    const home = await tempHome();
    gw = await startTestGateway({ home });
    const { code, stderr } = await cli([...argv, "--url", gw.gateway.url], { home, stdin: "" });
    expect(code).toBe(1);
    expect(stderr).toMatch(
      /INVALID_REQUEST: "agent:main:(\.\.\/\.\.\/stray|nonsense|telegram:dm:111 x|telegram:group:<script>)" is not a session key\. Keys look like/,
    );
    const client = await gw.client();
    expect(await client.call("sessions.list", {})).toMatchObject({ count: 0 });
    expect(await client.call("cron.list", {})).toEqual({ jobs: [] });
  });
});
