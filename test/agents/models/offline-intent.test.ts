import { describe, expect, it } from "vitest";
import { matchOfflineIntent } from "../../../src/agents/models/offline-intent.js";

describe("matchOfflineIntent", () => {
  it.each([
    ["list sessions", { toolName: "sessions_list", input: {} }],
    ["LIST SESSIONS now", { toolName: "sessions_list", input: {} }],
    ["send to main: hi", { toolName: "sessions_send", input: { sessionKey: "main", message: "hi" } }],
    [
      "send to agent:main:telegram:dm:42: see: this\nand that",
      { toolName: "sessions_send", input: { sessionKey: "agent:main:telegram:dm:42", message: "see: this\nand that" } },
    ],
    ["spawn: check the build", { toolName: "sessions_spawn", input: { task: "check the build" } }],
    ["history agent:main:main", { toolName: "sessions_history", input: { sessionKey: "agent:main:main" } }],
    ["agents", { toolName: "agents_list", input: {} }],
    ["List agents", { toolName: "agents_list", input: {} }],
  ])("reads %j as a tool call", (text, expected) => {
    expect(matchOfflineIntent(text)).toEqual(expected);
  });

  it.each(["hello", "please list sessions", "send to main", "spawn:", "history", "history a b", "agents please"])(
    "reads %j as plain text",
    (text) => {
      expect(matchOfflineIntent(text)).toBeUndefined();
    },
  );
});
