import { writeFile } from "node:fs/promises";
import path from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { createOutbox } from "../../src/delivery/outbox.js";
import { createInbox } from "../../src/inbound/inbox.js";
import { createMemoryLogger } from "../../src/logger.js";
import { cli, tempHome } from "../support/fake-cli-io.js";
import { onLocalState } from "../support/local-state.js";
import { seedOutbox, seedSetAside } from "../support/queue-rows.js";
import { useTestGateways } from "../support/test-gateway.js";

const startGateway = useTestGateways();

let home: string;

beforeEach(async () => {
  home = await tempHome();
});

const configure = (text: string) => writeFile(path.join(home, "switchboard.json5"), text);

describe("switchboard doctor", () => {
  it("prints the DM scope, the owners of each account and where they came from, and no warning for a one-person bot", async () => {
    await configure(`{ channels: { telegram: { allowFrom: ["42"], accounts: { work: { owners: [] } } } } }`);
    const { code, stdout } = await cli(["doctor"], { home });
    expect(code).toBe(0);
    expect(stdout).toContain(`DM sessions: dmScope "main": every DM shares agent:main:main`);
    expect(stdout).toContain(
      "  telegram: owners 42 (from allowFrom: no owners list); command users nobody; DMs from 42",
    );
    expect(stdout).toContain("  telegram (account work): owners nobody; command users nobody; DMs from 42");
    expect(stdout).toContain("no warnings");
  });

  it("counts a command user as a DM sender: under dmScope main their /context reads the owner's session", async () => {
    await configure(`{ channels: { telegram: { allowFrom: ["42"], commandAllowFrom: ["7"] } } }`);
    const { code, stdout } = await cli(["doctor"], { home });
    expect(code).toBe(0);
    expect(stdout).toContain("  telegram: owners 42 (from allowFrom: no owners list); command users 7; DMs from 42, 7");
    expect(stdout).toMatch(/warning: session\.dmScope is "main".*42, 7 may all DM it/);
  });

  it("warns, exit 0, when several people may DM a bot whose DMs share one session", async () => {
    await configure(`{ channels: { telegram: { dmPolicy: "open", owners: ["42"] } } }`);
    const { code, stdout } = await cli(["doctor"], { home });
    expect(code).toBe(0);
    expect(stdout).toContain("DMs from everyone");
    expect(stdout).toMatch(
      /warning: session\.dmScope is "main".*telegram \(dmPolicy is "open"\).*dmScope: "per-channel-peer"/,
    );
  });

  it("suggests dmPolicy pairing for an account whose allowFrom is empty, and not once it is set", async () => {
    await configure(`{ channels: { telegram: { owners: ["42"], accounts: { work: { dmPolicy: "pairing" } } } } }`);
    const { code, stdout } = await cli(["doctor"], { home });
    expect(code).toBe(0);
    expect(stdout).toContain(
      'suggestion: telegram: allowFrom is empty, so only owners may DM it. To let a new person in without editing the config, set dmPolicy: "pairing"',
    );
    expect(stdout).not.toContain("suggestion: telegram (account work)");
    expect(stdout).toContain(
      "  telegram (account work): owners 42; command users nobody; DMs from 42 and the senders an owner approves by pairing code",
    );
  });

  it("prints the same as JSON with --json", async () => {
    await configure(
      `{ session: { dmScope: "per-channel-peer" }, channels: { telegram: { allowFrom: ["42", "43"] } } }`,
    );
    const { code, stdout } = await cli(["doctor", "--json"], { home });
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual({
      config: { path: path.join(home, "switchboard.json5"), exists: true, valid: true },
      session: { dmScope: "per-channel-peer", mainKey: "main", scope: "per-sender", mainSession: "agent:main:main" },
      accounts: [
        {
          channel: "telegram",
          accountId: "default",
          dmPolicy: "allowlist",
          owners: ["42", "43"],
          ownersFrom: "allowFrom",
          commandUsers: [],
          dmSenders: ["42", "43"],
          manyDmSenders: true,
        },
      ],
      mcp: [],
      database: { backend: "local" },
      outbox: { pending: 0, retrying: 0, failed: [] },
      setAside: [],
      warnings: [],
      suggestions: [],
    });
  });

  it("shows what waits in the outbox and why, and what failed for good, with a warning for each", async () => {
    const logger = createMemoryLogger();
    const outbox = await createOutbox(onLocalState({ path: path.join(home, "state", "outbox.json"), logger }));
    await seedOutbox(outbox);
    await outbox.close();
    const { code, stdout } = await cli(["doctor"], { home });
    expect(code).toBe(0);
    expect(stdout).toMatch(
      /outbox: 1 waiting to be delivered \(1 retrying; the oldest for \dm; last error network: Telegram unreachable\)/,
    );
    expect(stdout).toMatch(
      /failed \dm ago: reply to telegram:43 \(agent:main:telegram:dm:43\): chat_not_found: Telegram chat 43 not found/,
    );
    expect(stdout).toMatch(
      /warning: 1 message\(s\) wait for a platform that keeps failing \(network: Telegram unreachable\)/,
    );
    expect(stdout).toMatch(/warning: 1 message\(s\) could not be delivered \(chat_not_found\)/);
  });

  it("shows set-aside inbound messages with a warning, as `inbox list` does without a gateway", async () => {
    const inbox = await createInbox(
      onLocalState({ path: path.join(home, "state", "inbox.json"), logger: createMemoryLogger() }),
    );
    await seedSetAside(inbox);
    await inbox.close();
    const { code, stdout } = await cli(["doctor"], { home });
    expect(code).toBe(0);
    expect(stdout).toContain("inbox: 1 message(s) set aside");
    expect(stdout).toContain("  telegram:default:42:9 telegram:42: its turn did not finish in 3 starts");
    expect(stdout).toMatch(/warning: 1 inbound message\(s\) set aside/);
    await configure("{ gateway: { port: 1 } }"); // no gateway answers there
    const listed = await cli(["inbox", "list"], { home });
    expect(listed.stdout).toContain("telegram:default:42:9  telegram:42 from 42");
    expect(listed.stdout).toContain('"the poison": its turn did not finish in 3 starts');
  });

  it("lists configured MCP servers as not checked when no gateway runs", async () => {
    await configure(
      `{ gateway: { port: 1 }, mcp: { servers: { notes: { command: "/nonexistent/mcp-server" }, web: { url: "http://127.0.0.1:9/mcp" } } } }`,
    );
    const { code, stdout } = await cli(["doctor"], { home });
    expect(code).toBe(0);
    expect(stdout).toContain("  notes (stdio): not checked (no gateway running; servers connect when it starts)");
    expect(stdout).toContain("  web (http): not checked");
  });

  it("reports an MCP server the running gateway could not start, with a warning, exit 0", async () => {
    const config = { mcp: { servers: { notes: { command: "/nonexistent/mcp-server" } } } };
    const gw = await startGateway({ home, config });
    await expect
      .poll(async () => (await (await gw.client()).call<{ mcp: Array<{ state: string }> }>("status")).mcp[0]?.state)
      .toBe("failed");
    await configure(JSON.stringify(config));
    const { code, stdout } = await cli(["doctor", "--json", "--url", gw.gateway.url], { home });
    expect(code).toBe(0);
    const report = JSON.parse(stdout);
    expect(report.mcp).toEqual([
      expect.objectContaining({ name: "notes", transport: "stdio", state: "failed", error: expect.any(String) }),
    ]);
    expect(report.warnings).toContainEqual(expect.stringContaining(`MCP server "notes" is failed`));
  });

  it("exits 2 on an invalid config, as config validate does", async () => {
    await configure(`{ session: { dmScope: "everyone" } }`);
    expect((await cli(["doctor"], { home })).code).toBe(2);
  });
});
