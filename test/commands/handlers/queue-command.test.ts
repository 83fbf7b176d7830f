import { describe, expect, it } from "vitest";
import { STRINGS } from "../../../src/commands/command-strings.js";
import { COMMAND_USER, createCommandHarness, dm } from "../command-harness.js";

const KEY = "agent:main:telegram:dm:42";

describe("queueCommand", () => {
  it("shows the session's mode and where it comes from, sets it for the session, and inherit goes back to the config", async () => {
    const h = await createCommandHarness({
      config: { session: { queue: { channels: { telegram: { mode: "collect" } } } } },
    });
    expect((await h.dispatch(dm("42", "/queue")))?.reply).toBe(
      STRINGS.queueShown({
        mode: "collect",
        from: "session.queue.channels",
        debounceMs: 500,
        cap: 20,
        overflow: "summarize",
      }),
    );
    const set = await h.dispatch(dm("42", "/queue steer"));
    expect(set?.reply).toContain(STRINGS.queueSet("steer"));
    expect(set?.reply).toContain("Queue mode: steer (set here with /queue)");
    expect(h.store.get(KEY)).toMatchObject({ queueMode: "steer" });
    expect((await h.dispatch(dm("42", "/queue inherit")))?.reply).toContain(
      "Queue mode: collect (session.queue.channels)",
    );
    expect(h.store.get(KEY)?.queueMode).toBeUndefined();
  });

  it("is for owners only, and an unknown mode gets the usage", async () => {
    const h = await createCommandHarness();
    expect((await h.dispatch(dm("42", "/queue collect"), COMMAND_USER))?.reply).toBe(STRINGS.refusedOwner("/queue"));
    expect(h.store.get(KEY)?.queueMode).toBeUndefined();
    expect((await h.dispatch(dm("42", "/queue sometimes")))?.reply).toContain(
      "Usage: /queue followup|collect|steer|interrupt|inherit",
    );
  });
});
