import { z } from "zod";
import type { SessionVisibility } from "../config/schema/index.js";
import type { ParsedSessionKey } from "../routing/session-key.js";
import type { DeliveryContext } from "../sessions/session-entry.js";
import type { Provenance } from "../sessions/transcripts/index.js";

/** Who calls a tool: the requesting session, its agent, where its chat is, and the trace it belongs to. */
export interface ToolCaller {
  agentId: string;
  /** the requesting session; absent for an owner calling through the gateway without naming one */
  sessionKey?: ParsedSessionKey;
  /** the run that made the call */
  runId?: string;
  /** derived from the run id and the call's position in the run (`<runId>:<position>`), stable across a replay; receiving sides dedupe by it */
  callId?: string;
  /** the chat the request came from, captured now (a spawn announces there) */
  origin?: DeliveryContext;
  /** the agent-to-agent chain this call belongs to */
  trace?: { traceId: string; hop: number };
  /** sandboxed sessions see only what they spawned (agents.*.sandbox) */
  sandboxed: boolean;
  /** an owner (or a gateway client) triggered the turn; turns it starts elsewhere keep that authority */
  owner?: boolean;
  /** how far the session tools reach (tools.sessions.visibility); default "agent" (an owner) */
  visibility?: SessionVisibility;
}

/** A count or limit argument: a whole number >= `min` (typed "number" in the model's JSON schema). */
export function wholeNumber(min: number) {
  return z
    .number()
    .min(min)
    .refine(Number.isSafeInteger, { message: `must be a whole number >= ${min}` });
}

/** A failure a tool reports to its caller as `{status, error}` instead of throwing. */
export class ToolFailure extends Error {
  constructor(
    readonly status: "error" | "forbidden",
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = "ToolFailure";
  }
}

/** A session tool: a name, a description for the model, a zod input schema and `run`. */
export interface ToolDefinition<S extends z.ZodType = z.ZodType, D = unknown> {
  name: string;
  description: string;
  input: S;
  run(input: z.output<S>, caller: ToolCaller, deps: D): Promise<unknown>;
}

/** Declares a tool with its input type inferred from the schema. */
export function defineTool<S extends z.ZodType, D>(tool: ToolDefinition<S, D>): ToolDefinition<S, D> {
  return tool;
}

/** The provenance a message sent by `caller` carries into another session. */
export function provenanceOf(caller: ToolCaller, hop: number, traceId: string): Provenance {
  return {
    kind: "session",
    ...(caller.sessionKey && { sessionKey: caller.sessionKey.key }),
    ...(caller.runId && { runId: caller.runId }),
    traceId,
    hop,
  };
}
