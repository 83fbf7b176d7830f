import { z } from "zod";
import { AccountIdSchema } from "./access.js";

/** A peer a binding matches: a DM sender, a group or a channel, by platform id. */
const BindingPeerSchema = z.strictObject({
  /** "dm" (alias "direct"), "group" or "channel" */
  kind: z.enum(["dm", "direct", "group", "channel"]).transform((v) => (v === "direct" ? "dm" : v)),
  /** the platform id, compared exactly */
  id: z
    .union([z.string(), z.number()])
    .transform((v) => String(v).trim())
    .pipe(z.string().min(1)),
});

/** One entry of `bindings`: messages that match go to `agentId` (precedence: docs/session-keys.md). */
export const BindingSchema = z.strictObject({
  agentId: z.string().trim().toLowerCase().min(1),
  match: z.strictObject({
    /** channel name, e.g. "telegram" (legacy name `provider` is accepted) */
    channel: z.string().trim().toLowerCase().min(1),
    /** default: the "default" account only; "*" matches every account */
    accountId: z.union([z.literal("*"), AccountIdSchema]).optional(),
    peer: BindingPeerSchema.optional(),
    /** Discord guild id */
    guildId: z
      .union([z.string(), z.number()])
      .transform((v) => String(v).trim())
      .optional(),
    /** Slack team id (kept for configs shared with other tools) */
    teamId: z.string().trim().min(1).optional(),
  }),
});
export type Binding = z.infer<typeof BindingSchema>;
