import { z } from "zod";
import { RESERVED_KEY_WORDS } from "./session.js";

/** An account id as written in `accounts.<id>` or a binding: any name but the structural key words. */
export const AccountIdSchema = z
  .string()
  .trim()
  .min(1)
  .refine((v) => !(RESERVED_KEY_WORDS as readonly string[]).includes(v.toLowerCase()), {
    message: `must not be a reserved key word (${RESERVED_KEY_WORDS.join(", ")})`,
  });

/** A numeric id: only safe integers survive JSON unchanged (Discord snowflakes do not). */
const NumericIdSchema = z.number().refine(Number.isSafeInteger, {
  message:
    'this number is not a safe integer, so its digits may already be lost: write ids as strings ("1234567890123456789")',
});

/** A list of platform ids or usernames; numbers are read as ids; "*" must be written to mean everyone. */
export const AllowListSchema = z.array(z.union([z.string(), NumericIdSchema]).transform((v) => String(v).trim()));

/** Who may reach the bot where: an empty list never means everyone. */
const AccessPolicySchema = z.enum(["allowlist", "open", "disabled"]);

/** DMs add `pairing`: an unknown sender gets a one-time code an owner approves (docs/operations.md). */
const DmPolicySchema = z.enum(["allowlist", "pairing", "open", "disabled"]);

/** How pairing codes behave on one account (`dmPolicy: "pairing"`). */
const PairingSchema = z.strictObject({
  /** default: 3600; how long a code can be approved */
  codeTtlSeconds: z.number().int().min(1).default(3600),
  /** default: 3; codes waiting for an owner at once; more unknown senders get no code until one is decided or expires */
  maxPending: z.number().int().min(1).default(3),
});

/** The three authorization tiers every channel account carries (never inferred from each other). */
export const accessFields = {
  /** default: "allowlist"; DMs from anyone ("open"), from `allowFrom` only, from `allowFrom` and senders an owner approved by code ("pairing"), or none */
  dmPolicy: DmPolicySchema.optional(),
  /** default: { codeTtlSeconds: 3600, maxPending: 3 }; pairing codes, used when dmPolicy is "pairing" */
  pairing: PairingSchema.optional(),
  /** default: []; who may talk to the bot in DMs */
  allowFrom: AllowListSchema.optional(),
  /** default: "allowlist"; group messages from anyone, from `groupAllowFrom` only, or none */
  groupPolicy: AccessPolicySchema.optional(),
  /** default: []; who may talk to the bot in groups */
  groupAllowFrom: AllowListSchema.optional(),
  /** default: []; who may run commands (owners always may) */
  commandAllowFrom: AllowListSchema.optional(),
  /** default: []; who may run owner-only commands such as /send */
  owners: AllowListSchema.optional(),
};

/** Retry policy for sends to a platform: how long a retryable failure keeps being retried, not how often. */
export const RetrySchema = z.strictObject({
  /** default: none; an optional cap on attempts in all (the first included), on top of `maxAgeMs` */
  attempts: z.number().int().min(1).optional(),
  /** default: 500; ms before the first retry, doubled per failure */
  minDelayMs: z.number().int().min(0).default(500),
  /** default: 30000; the backoff never grows past this (a platform's retry-after may) */
  maxDelayMs: z.number().int().min(0).default(30_000),
  /** default: 43200000 (12 h); a message still undelivered this long after it was handed over fails */
  maxAgeMs: z
    .number()
    .int()
    .min(1000)
    .default(12 * 60 * 60 * 1000),
});

/** How replies quote the message they answer. */
export const ReplyToModeSchema = z.enum(["off", "first", "all"]);
