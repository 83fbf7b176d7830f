import { z } from "zod";

/** `POST <hooks.path>/agent`: runs an agent turn for an outside system (CI, mail, monitoring). */
export const HookAgentRequestSchema = z.strictObject({
  /** what the agent is asked */
  message: z
    .string()
    .refine((m) => m.trim() !== "", "message required")
    .pipe(z.string().max(100_000)),
  /** a label for logs and the transcript, e.g. "ci" */
  name: z.string().trim().min(1).max(100).optional(),
  /** default: the default agent */
  agentId: z.string().trim().toLowerCase().min(1).optional(),
  /** only with hooks.allowRequestSessionKey; default a new `agent:<id>:hook:<uuid>` */
  sessionKey: z.string().trim().min(1).optional(),
  /** default: true; announce the reply through the delivery gate */
  deliver: z.boolean().default(true),
  /** default: "last" (the agent main session's last route); or a target such as telegram:-100123:topic:42 */
  to: z.string().trim().min(1).default("last"),
  /** `provider/model` or an alias for this turn */
  model: z.string().trim().min(1).optional(),
  timeoutSeconds: z.number().int().min(1).max(3600).optional(),
  /** the same key again runs nothing new and answers with the first run */
  idempotencyKey: z.string().trim().min(1).max(200).optional(),
});

/** `POST <hooks.path>/wake`: a system line for the agent's main session, then a turn. */
export const HookWakeRequestSchema = z.strictObject({
  text: z
    .string()
    .refine((t) => t.trim() !== "", "text required")
    .pipe(z.string().max(20_000)),
  /** default: the default agent */
  agentId: z.string().trim().toLowerCase().min(1).optional(),
  /** default: true; the reply goes to the main session's last route */
  deliver: z.boolean().default(true),
  idempotencyKey: z.string().trim().min(1).max(200).optional(),
});
