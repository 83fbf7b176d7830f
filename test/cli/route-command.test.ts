import { execFile } from "node:child_process";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { beforeEach, describe, expect, it } from "vitest";
import { cli, tempHome } from "../support/fake-cli-io.js";

const bin = path.resolve(import.meta.dirname, "../../bin/switchboard");
let home: string;

beforeEach(async () => {
  home = await tempHome();
});

describe("switchboard route", () => {
  it("prints the forum topic session key as JSON from the real binary", async () => {
    const { stdout } = await promisify(execFile)(
      bin,
      [
        "route",
        "--channel",
        "telegram",
        "--chat-type",
        "group",
        "--chat-id",
        "-1001234567890",
        "--topic",
        "99",
        "--json",
      ],
      { env: { ...process.env, SWITCHBOARD_HOME: home } },
    );
    expect(JSON.parse(stdout)).toMatchObject({
      sessionKey: "agent:main:telegram:group:-1001234567890:topic:99",
      agentId: "main",
      matchedBy: "default",
      kind: "group",
      channel: "telegram",
    });
  });

  it("names the agent and the binding that claimed the message", async () => {
    await writeFile(
      path.join(home, "switchboard.json5"),
      `{ agents: { list: [{ id: "home", default: true }, { id: "support" }] },
         bindings: [{ agentId: "support", match: { channel: "discord", guildId: "g1" } }] }`,
    );
    const json = await cli(
      ["route", "--channel", "discord", "--chat-type", "channel", "--chat-id", "C1", "--guild", "g1", "--json"],
      { home },
    );
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({
      sessionKey: "agent:support:discord:channel:C1",
      agentId: "support",
      matchedBy: "binding.guild",
      binding: { index: 0, agentId: "support" },
    });
    const text = await cli(
      ["route", "--channel", "discord", "--chat-type", "channel", "--chat-id", "C1", "--guild", "g1"],
      { home },
    );
    expect(text.stdout).toContain("sessionKey  agent:support:discord:channel:C1");
    expect(text.stdout).toContain('matchedBy   binding.guild (bindings[0]: {"channel":"discord","guildId":"g1"})');
  });

  it("keys a DM by the sender under the configured dmScope", async () => {
    await writeFile(
      path.join(home, "switchboard.json5"),
      `{ session: { dmScope: "per-peer", identityLinks: { alice: ["telegram:111"] } } }`,
    );
    const { stdout } = await cli(["route", "--channel", "telegram", "--sender", "111", "--json"], { home });
    expect(JSON.parse(stdout)).toMatchObject({ sessionKey: "agent:main:dm:alice", kind: "dm" });
  });

  it("routes an inbound message given as JSON on stdin", async () => {
    const message = {
      channel: "telegram",
      chat: { type: "group", id: -1001234567890, isForum: true },
      sender: { id: 42 },
      text: "hi",
    };
    const { code, stdout } = await cli(["route", "--json"], { home, stdin: JSON.stringify(message) });
    expect(code).toBe(0);
    expect(JSON.parse(stdout).sessionKey).toBe("agent:main:telegram:group:-1001234567890:topic:1");
  });

  it("exits 2 with the field path when stdin is not an inbound message", async () => {
    const { code, stderr } = await cli(["route"], {
      home,
      stdin: JSON.stringify({ channel: "telegram", chat: { type: "room", id: 1 } }),
    });
    expect(code).toBe(2);
    expect(stderr).toContain("stdin: not an inbound message:");
    expect(stderr).toContain("chat.type:");
    expect(stderr).toContain("sender:");
  });

  it("exits 2 on a bad flag value, naming the allowed choices", async () => {
    const { code, stderr } = await cli(["route", "--channel", "telegram", "--chat-type", "room"], { home });
    expect(code).toBe(2);
    expect(stderr).toMatch(/Allowed choices are direct, group, channel/);
  });

  it("exits 2 when a group has no chat id", async () => {
    const { code, stderr } = await cli(["route", "--channel", "telegram", "--chat-type", "group"], { home });
    expect(code).toBe(2);
    expect(stderr).toContain("--chat-id is required for --chat-type group");
  });
});
