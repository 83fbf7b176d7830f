// What the terminal chat prints of a run whose end it learned from agent.wait after a reconnect,
// against the deliveries it printed before and the ones that arrive after (docs/reliability.md).
import { describe, expect, it } from "vitest";
import { failureKey, replyKey } from "../../src/agents/run-delivery-keys.js";
import type { CliIo } from "../../src/cli/cli-io.js";
import { newChatTurns, showAskedEnd, showDelivery, showUnknownRun } from "../../src/cli/chat-turns.js";

function terminal() {
  const lines: string[] = [];
  const io = { stdout: { write: (s: string) => lines.push(...s.trimEnd().split("\n")) } } as unknown as CliIo;
  return { io, lines, turns: newChatTurns() };
}

describe("the terminal chat's run ends", () => {
  it("prints a reply told by agent.wait once, and not again when its delivery comes after", () => {
    const { io, lines, turns } = terminal();
    showAskedEnd(io, turns, "run-1", { status: "ok", text: "Echo: hi" });
    showDelivery(io, turns, { text: "Echo: hi", messageId: `${replyKey("run-1")}#0` });
    showDelivery(io, turns, { text: "Echo: hi", messageId: `${replyKey("run-1")}#0` });
    expect(lines).toEqual(["agent: Echo: hi"]);
  });

  it("prints nothing more when the reply was delivered before agent.wait told the end", () => {
    const { io, lines, turns } = terminal();
    showDelivery(io, turns, { text: "Echo: hi", messageId: `${replyKey("run-1")}#0` });
    showAskedEnd(io, turns, "run-1", { status: "ok", text: "Echo: hi" });
    showUnknownRun(io, turns, "run-1");
    expect(lines).toEqual(["agent: Echo: hi"]);
  });

  it("gives a failed run exactly one line, whether its notice came or not", () => {
    const missed = terminal();
    showAskedEnd(missed.io, missed.turns, "run-2", { status: "error", error: "model down" });
    showDelivery(missed.io, missed.turns, {
      text: "⚠️ The agent failed: model down",
      messageId: `${failureKey("run-2")}#0`,
    });
    expect(missed.lines).toEqual(["[run error: model down]"]);
    const seen = terminal();
    showDelivery(seen.io, seen.turns, {
      text: "⚠️ The agent failed: model down",
      messageId: `${failureKey("run-2")}#0`,
    });
    showAskedEnd(seen.io, seen.turns, "run-2", { status: "error", error: "model down" });
    expect(seen.lines).toEqual(["agent: ⚠️ The agent failed: model down"]);
  });

  it("keeps other runs' deliveries, and says so when the restarted gateway does not know a run", () => {
    const { io, lines, turns } = terminal();
    showAskedEnd(io, turns, "run-1", { status: "ok", text: "first" });
    showDelivery(io, turns, { text: "second", messageId: `${replyKey("run-10")}#0` });
    showUnknownRun(io, turns, "run-3");
    expect(lines).toEqual([
      "agent: first",
      "agent: second",
      "[the gateway restarted during this turn; if it replays the message, its reply follows]",
    ]);
  });
});
