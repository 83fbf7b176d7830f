import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/index.js";
import { recordingPort } from "../support/recording-port.js";
import { createTestCore, homeForTest } from "../support/test-core.js";

describe("the gateway's state", () => {
  it("keeps every store in the one port it was given, and closes the port after the stores", async () => {
    const home = await homeForTest("gateway-state");
    const { port, events } = recordingPort(path.join(home, "state"));
    const { config } = parseConfig({ agents: { list: [{ id: "main" }, { id: "work" }] } });
    const core = await createTestCore(config, home, { state: port });
    await core.sessions.forAgent("main");
    await core.sessions.forAgent("work");
    const tables = [
      "outbox",
      "subagents",
      "inbox",
      "pairing",
      "tool-calls",
      "cron-jobs",
      "cron-runs",
      "channels",
      "sessions:main",
      "sessions:work",
    ];
    expect(events.filter((e) => e.startsWith("open ")).sort()).toEqual(tables.map((t) => `open ${t}`).sort());

    await core.stop(0);
    expect(events.at(-1)).toBe("close port");
    expect(events.filter((e) => e.startsWith("close ") && e !== "close port").sort()).toEqual(
      tables.map((t) => `close ${t}`).sort(),
    );
  });
});
