import { z } from "zod";
import { transcriptRef } from "../sessions/agent-sessions.js";
import { resolveTarget } from "./session-access.js";
import type { ToolDeps } from "./tool-deps.js";
import { defineTool, wholeNumber } from "./tool-definition.js";

/** `sessions_history`: a session's transcript in its raw format, newest messages last. */
export const sessionsHistoryTool = defineTool({
  name: "sessions_history",
  description: "Fetch the message history of a session (by key or sessionId).",
  input: z.strictObject({
    sessionKey: z
      .string()
      .trim()
      .min(1)
      .describe('a session key from sessions_list (e.g. "agent:main:telegram:group:-100123") or a sessionId'),
    limit: wholeNumber(1).optional().describe("messages to return, default 200, at most 1000"),
    includeTools: z.boolean().optional().describe("include tool calls and results (default false)"),
    cursor: z.string().optional().describe("from a previous result: the page of older messages"),
  }),
  async run(input, caller, deps: ToolDeps) {
    const target = await resolveTarget(deps, caller, input.sessionKey);
    const { transcripts } = await deps.sessions.forAgent(target.agentId);
    const limit = Math.min(1000, input.limit ?? 200);
    const page = await transcripts.readTail(transcriptRef(target.entry), {
      limit,
      includeTools: input.includeTools ?? false,
      ...(input.cursor && { cursor: input.cursor }),
    });
    return { sessionKey: target.displayKey, sessionId: target.entry.sessionId, ...page };
  },
});
