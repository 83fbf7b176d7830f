import { type ToolSet, jsonSchema, tool } from "ai";
import { z } from "zod";
import { formatPath } from "../config/format-issues.js";
import { resultError } from "../errors.js";
import { agentsListTool } from "./agents-list.js";
import { sessionsHistoryTool } from "./sessions-history.js";
import { sessionsListTool } from "./sessions-list.js";
import { sessionsSendTool } from "./sessions-send.js";
import { sessionsSpawnTool } from "./sessions-spawn.js";
import type { ToolDeps } from "./tool-deps.js";
import { type ToolCaller, type ToolDefinition, ToolFailure } from "./tool-definition.js";

/** Every session tool, by name. */
export const SESSION_TOOLS: readonly ToolDefinition<z.ZodType, ToolDeps>[] = [
  sessionsListTool,
  sessionsHistoryTool,
  sessionsSendTool,
  sessionsSpawnTool,
  agentsListTool,
] as ToolDefinition<z.ZodType, ToolDeps>[];

/** Tools a sub-agent never gets, whatever `tools.subagents.tools` says. */
export const SUBAGENT_DENIED: ReadonlySet<string> = new Set(SESSION_TOOLS.map((t) => t.name));

/** A structured tool error: `{status, error}` plus anything the tool attached. */
type ToolError = { status: "error" | "forbidden"; error: string } & Record<string, unknown>;

/** `invalid arguments for <tool>: <field>: <problem>; ...`, or undefined when `args` are valid. */
export function argumentProblems(definition: ToolDefinition<z.ZodType, ToolDeps>, args: unknown): string | undefined {
  const parsed = definition.input.safeParse(args ?? {});
  if (parsed.success) return undefined;
  return `invalid arguments for ${definition.name}: ${parsed.error.issues.map((issue) => `${formatPath(issue.path)}: ${issue.message}`).join("; ")}`;
}

/**
 * Validates arguments, runs the tool and turns failures into `{status, error}` results: the one
 * edge where tool errors become data (for agents, `tools.invoke`, HTTP and the CLI alike).
 */
export async function invokeTool(
  definition: ToolDefinition<z.ZodType, ToolDeps>,
  args: unknown,
  caller: ToolCaller,
  deps: ToolDeps,
): Promise<unknown> {
  const parsed = definition.input.safeParse(args ?? {});
  if (!parsed.success) return { status: "error", error: argumentProblems(definition, args)! } satisfies ToolError;
  try {
    return await definition.run(parsed.data, caller, deps);
  } catch (err) {
    if (err instanceof ToolFailure) return { status: err.status, error: err.message, ...err.extra } satisfies ToolError;
    // The result edge: a known error keeps its message; anything else is logged with an error id.
    const { code, message } = resultError(err, deps.logger, "tool failed", { tool: definition.name });
    if (code !== "INTERNAL") return { status: "error", error: message } satisfies ToolError;
    return { status: "error", error: `${definition.name} failed: ${message}` } satisfies ToolError;
  }
}

/** The tools one session may use: all of them, or for a sub-agent the configured set minus session tools. */
export function toolsFor(deps: ToolDeps, caller: ToolCaller): ToolDefinition<z.ZodType, ToolDeps>[] {
  if (caller.sessionKey?.kind !== "subagent") return [...SESSION_TOOLS];
  const { allow, deny } = deps.config.tools.subagents.tools;
  const lower = (names: readonly string[]) => new Set(names.map((n) => n.toLowerCase()));
  const [allowed, denied] = [allow && lower(allow), lower(deny)];
  return SESSION_TOOLS.filter(
    (t) => !SUBAGENT_DENIED.has(t.name) && !denied.has(t.name) && (!allowed || allowed.has(t.name)),
  );
}

const inputSchemas = new WeakMap<z.ZodType, ReturnType<typeof jsonSchema>>();

/** A tool's input as the model sees it (JSON Schema), converted once per schema rather than on every turn. */
export function toolInputSchema(input: z.ZodType): ReturnType<typeof jsonSchema> {
  let schema = inputSchemas.get(input);
  if (!schema) {
    schema = jsonSchema(z.toJSONSchema(input, { io: "input" }) as Parameters<typeof jsonSchema>[0]);
    inputSchemas.set(input, schema);
  }
  return schema;
}

/** The same definitions as AI SDK tools for a run, bound to its caller. */
export function aiToolsFor(deps: ToolDeps, caller: ToolCaller): ToolSet {
  const set: ToolSet = {};
  for (const definition of toolsFor(deps, caller)) {
    set[definition.name] = tool({
      description: definition.description,
      inputSchema: toolInputSchema(definition.input),
      execute: (args: unknown) => invokeTool(definition, args, caller, deps),
    });
  }
  return set;
}

/** Looks a tool up by name. */
export function findTool(name: string): ToolDefinition<z.ZodType, ToolDeps> | undefined {
  return SESSION_TOOLS.find((t) => t.name === name);
}
