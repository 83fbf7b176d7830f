import { describe, expect, it } from "vitest";
import { STRINGS } from "../../../src/commands/command-strings.js";
import { COMPACTION_MARKER } from "../../../src/agents/compaction-marker.js";
import { createCommandHarness, dm } from "../command-harness.js";

const KEY = "agent:main:telegram:dm:42";
const CHAT = [
  { role: "user" as const, content: "Plan the offsite for March 3." },
  { role: "assistant" as const, content: "Booked the hall; catering is still open." },
  { role: "user" as const, content: "Ask Bea about catering." },
];

describe("compactCommand", () => {
  it("summarizes with the session's model, appends the marker, counts the compaction and reports the sizes", async () => {
    const h = await createCommandHarness({
      steps: [{ text: "Offsite March 3; hall booked; ask Bea about catering." }],
    });
    await h.seed(KEY, {}, CHAT);
    const reply = (await h.dispatch(dm("42", "/compact keep the dates")))?.reply;
    expect(reply).toMatch(/^Compacted 3 messages \(~\d+ tokens\) into a summary \(~\d+ tokens\)\. Compactions: 1\.$/);
    const prompt = JSON.stringify(h.model.prompts[0]);
    expect(prompt).toContain("Ask Bea about catering.");
    expect(prompt).toContain(STRINGS.compactRequest("keep the dates"));
    const transcript = await h.transcript(KEY);
    expect(transcript).toHaveLength(4);
    expect(transcript.at(-1)).toMatchObject({
      role: "system",
      content: `${COMPACTION_MARKER} Offsite March 3; hall booked; ask Bea about catering.`,
      provenance: { kind: "system" },
    });
    expect(h.store.get(KEY)?.compactionCount).toBe(1);
  });

  it("compacts from the last summary on, which the model gets in its system prompt", async () => {
    const h = await createCommandHarness({ steps: [{ text: "first summary" }, { text: "second summary" }] });
    await h.seed(KEY, {}, CHAT);
    await h.dispatch(dm("42", "/compact"));
    await h.transcripts.append(h.store.get(KEY)!.sessionId, { role: "user", content: "Bea says pizza." });
    expect((await h.dispatch(dm("42", "/compact")))?.reply).toMatch(/^Compacted 2 messages .* Compactions: 2\.$/);
    const [system, ...messages] = h.model.prompts[1]!;
    expect(JSON.stringify(system)).toContain(`${COMPACTION_MARKER} first summary`);
    expect(JSON.stringify(messages)).not.toContain("Plan the offsite");
  });

  it("keeps the newest lines instead of asking the offline model", async () => {
    const h = await createCommandHarness({ offline: true });
    await h.seed(KEY, {}, CHAT);
    await h.dispatch(dm("42", "/compact"));
    expect(h.model.calls).toEqual([]);
    expect((await h.transcript(KEY)).at(-1)?.content).toBe(
      `${COMPACTION_MARKER} ${STRINGS.compactOffline(3)}\n- user: Plan the offsite for March 3.\n- assistant: Booked the hall; catering is still open.\n- user: Ask Bea about catering.`,
    );
  });

  it("has nothing to compact in a new session or right after a compaction", async () => {
    const h = await createCommandHarness({ offline: true });
    expect(await h.dispatch(dm("42", "/compact"))).toEqual({ reply: STRINGS.compactNothing });
    await h.seed(KEY, {}, CHAT);
    await h.dispatch(dm("42", "/compact"));
    expect(await h.dispatch(dm("42", "/compact"))).toEqual({ reply: STRINGS.compactNothing });
  });

  it("waits for no turn: it refuses while one runs", async () => {
    const h = await createCommandHarness({ steps: [{ text: "never", delayMs: 5_000 }] });
    await h.seed(KEY, {}, CHAT);
    const run = h.runtime.enqueue({
      parsed: h.context(dm("42", "x")).sessionKey,
      agentId: "main",
      prompt: "go",
      deliver: false,
    });
    await expect.poll(() => h.model.calls.length).toBe(1);
    expect(await h.dispatch(dm("42", "/compact"))).toEqual({ reply: STRINGS.compactBusy });
    h.runtime.abortSession(KEY);
    await run.done;
  });

  it("leaves the context alone when the model returns no summary", async () => {
    const h = await createCommandHarness({ steps: [{ text: "  " }] });
    await h.seed(KEY, {}, CHAT);
    expect((await h.dispatch(dm("42", "/compact")))?.reply).toMatch(
      /^\/compact failed: the model returned an empty summary/,
    );
    expect(await h.transcript(KEY)).toHaveLength(3);
    expect(h.store.get(KEY)?.compactionCount).toBeUndefined();
  });

  it("apologizes with an error id, never the raw message, when building the model hits a bug", async () => {
    const h = await createCommandHarness({
      resolveModel: () => {
        throw new Error("connect ECONNREFUSED 10.0.0.7:11434");
      },
    });
    await h.seed(KEY, {}, CHAT);
    const reply = (await h.dispatch(dm("42", "/compact")))?.reply;
    expect(reply).toMatch(/^\/compact failed: Sorry, something went wrong on my side \(error id [0-9a-f]{8}\)\.$/);
    expect(reply).not.toContain("10.0.0.7");
    expect(h.store.get(KEY)?.compactionCount).toBeUndefined();
  });
});
