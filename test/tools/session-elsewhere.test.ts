// `resolveTarget` on a core holding some partitions only (`cluster.owners: "many"`, docs/scale-out.md
// "N owners"): a session missing from the store is read through `ToolDeps.sessionElsewhere` (its
// committed row on another gateway's partition), and the visibility rule still applies to it.
import { afterEach, describe, expect, it } from "vitest";
import type { SessionEntry } from "../../src/sessions/session-entry.js";
import { resolveTarget } from "../../src/tools/session-access.js";
import { ToolFailure } from "../../src/tools/tool-definition.js";
import { type ToolHarness, createToolHarness } from "../support/tool-harness.js";

let h: ToolHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const ELSEWHERE = "agent:ops:webchat:dm:far";
const rows = new Map<string, SessionEntry>([[`ops ${ELSEWHERE}`, { sessionId: "far-1", updatedAt: 1 }]]);
const elsewhere = async (agentId: string, key: string) => rows.get(`${agentId} ${key}`);

describe("resolveTarget with sessions held elsewhere", () => {
  it("resolves a session only another gateway holds from its committed row, when the caller may see it", async () => {
    h = await createToolHarness({
      config: { agents: { list: [{ id: "main" }, { id: "ops" }] }, tools: { agentToAgent: { enabled: true } } },
    });
    const deps = { ...h.deps, sessionElsewhere: elsewhere };
    const target = await resolveTarget(deps, h.caller("agent:main:main"), ELSEWHERE);
    expect(target).toMatchObject({ agentId: "ops", parsed: { key: ELSEWHERE }, entry: { sessionId: "far-1" } });
    // Without the read (one owner: the store holds every session) it is unknown, as before.
    await expect(resolveTarget(h.deps, h.caller("agent:main:main"), ELSEWHERE)).rejects.toBeInstanceOf(ToolFailure);
  });

  it("keeps the visibility rule for it: another agent's session needs tools.agentToAgent", async () => {
    h = await createToolHarness({ config: { agents: { list: [{ id: "main" }, { id: "ops" }] } } });
    const deps = { ...h.deps, sessionElsewhere: elsewhere };
    await expect(resolveTarget(deps, h.caller("agent:main:main"), ELSEWHERE)).rejects.toMatchObject({
      message: `Unknown session '${ELSEWHERE}'. Use sessions_list to see the keys you can reach.`,
    });
  });
});
