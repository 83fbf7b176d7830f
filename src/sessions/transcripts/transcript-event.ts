import { z } from "zod";

// Every schema here reads records from disk, so unknown fields are kept (loose objects): reading
// and rewriting a transcript never loses what a newer version or another tool wrote.

const TextBlockSchema = z.looseObject({ type: z.literal("text"), text: z.string() });
const ToolCallBlockSchema = z.looseObject({
  type: z.literal("toolCall"),
  id: z.string(),
  name: z.string(),
  arguments: z.unknown(),
});
const ToolResultBlockSchema = z.looseObject({
  type: z.literal("toolResult"),
  toolCallId: z.string(),
  content: z.unknown(),
  isError: z.boolean().optional(),
});
const KNOWN_BLOCKS = new Set(["text", "toolCall", "toolResult"]);
/** Block types we do not know yet (images, thinking, ...) pass as they are; known ones must be well formed. */
const OtherBlockSchema = z.looseObject({ type: z.string() }).refine((block) => !KNOWN_BLOCKS.has(block.type), {
  message: "malformed text, toolCall or toolResult block",
});

/** One block of a message's content. */
const ContentBlockSchema = z.union([TextBlockSchema, ToolCallBlockSchema, ToolResultBlockSchema, OtherBlockSchema]);
export type ContentBlock = z.infer<typeof ContentBlockSchema>;

/** Where an inter-session (agent-to-agent) or injected message came from. */
const ProvenanceSchema = z.looseObject({
  kind: z.enum(["channel", "session", "system"]),
  channel: z.string().optional(),
  sessionKey: z.string().optional(),
  runId: z.string().optional(),
  traceId: z.string().optional(),
  /** how many agent-to-agent hops the message has travelled */
  hop: z.number().int().min(0).optional(),
});
export type Provenance = z.infer<typeof ProvenanceSchema>;

const tokens = z.number().min(0).optional();

/** Token usage of one model reply. */
const UsageSchema = z.looseObject({
  input: tokens,
  output: tokens,
  cacheRead: tokens,
  cacheWrite: tokens,
  totalTokens: tokens,
});

/** Roles a transcript message can have; `toolCall` and `toolResult` are hidden unless `includeTools`. */
const TRANSCRIPT_ROLES = ["user", "assistant", "toolCall", "toolResult", "system"] as const;

/** The `message` of a transcript line: the raw form `sessions_history` and `chat.history` return. */
export const TranscriptMessageSchema = z.looseObject({
  role: z.enum(TRANSCRIPT_ROLES),
  content: z.union([z.string(), z.array(ContentBlockSchema)]),
  /** ms since the epoch */
  timestamp: z.number(),
  runId: z.string().optional(),
  provenance: ProvenanceSchema.optional(),
  usage: UsageSchema.optional(),
  model: z.string().optional(),
  /** a chat command (`/status`) or its reply: shown in the session's history, never given to a model */
  command: z.literal(true).optional(),
  /** a sub-agent's announce kept in the requester's history: shown to people, never given to a model */
  announce: z.literal(true).optional(),
  /** a reply the send policy kept from its chat (`/send off`): in the history, never delivered */
  withheld: z.literal(true).optional(),
});
export type TranscriptMessage = z.infer<typeof TranscriptMessageSchema>;

/** What `append` takes: a message whose `timestamp` defaults to the clock. */
export type TranscriptMessageInput = Omit<KnownFields<z.input<typeof TranscriptMessageSchema>>, "timestamp"> & {
  timestamp?: number;
};

/** The declared fields of a loose object type, without its index signature (which would swallow them in `Omit`). */
type KnownFields<T> = { [K in keyof T as string extends K ? never : K]: T[K] };

/** The first line of every transcript file. */
export const TranscriptHeaderSchema = z.looseObject({
  type: z.literal("session"),
  version: z.number().int(),
  id: z.string(),
  /** ISO 8601 */
  timestamp: z.string(),
  cwd: z.string(),
  /** the parent transcript file of a forked session */
  parentSession: z.string().optional(),
});
export type TranscriptHeader = z.infer<typeof TranscriptHeaderSchema>;

/** Version written in new headers (the format of the system we re-implement). */
export const TRANSCRIPT_VERSION = 1;

/** Every other line: one message event. */
export const TranscriptMessageLineSchema = z.looseObject({
  type: z.literal("message"),
  /** ISO 8601; when the line was written */
  timestamp: z.string().optional(),
  message: TranscriptMessageSchema,
});

/** True for a chat command, its reply, or a kept sub-agent announce: shown in history, in no model's context. */
export function isCommandMessage(message: TranscriptMessage): boolean {
  return message.command === true || message.announce === true;
}

/** True for roles hidden when `includeTools` is false. */
export function isToolMessage(message: TranscriptMessage): boolean {
  return message.role === "toolCall" || message.role === "toolResult";
}
