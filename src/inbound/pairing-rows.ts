// The pairing table's rows: codes given to unknown senders and the senders owners let in.
import { z } from "zod";
import type { PairingScope } from "../commands/pairing-control.js";

/** Who asked: the account they wrote to and who they are there. */
const SenderFields = {
  channel: z.string().min(1),
  accountId: z.string().min(1),
  /** the platform id, lowercased as access lists compare it */
  senderId: z.string().min(1),
  username: z.string().optional(),
  name: z.string().optional(),
};

/** One pairing code: pending until an owner approves or denies it, or it expires. */
const RequestRowSchema = z.object({
  kind: z.literal("request"),
  code: z.string().min(1),
  ...SenderFields,
  /** the DM the code came from: where the code and the approval notice go */
  chatId: z.string().min(1),
  threadId: z.string().optional(),
  /** that DM's session key, which the delivery gate files the notices under */
  sessionKey: z.string().min(1),
  createdAt: z.number(),
  expiresAt: z.number(),
  status: z.enum(["pending", "approved", "denied"]),
  decidedAt: z.number().optional(),
  /** who decided: `cli`, or `<channel>:<sender id>` of the owner */
  decidedBy: z.string().optional(),
  /** the message carrying the code was handed to the delivery gate (else it is handed again at the sender's next message) */
  codeSent: z.literal(true).optional(),
  /** the approval notice was handed to the delivery gate (an approval made without a gateway waits for its start) */
  notified: z.literal(true).optional(),
});

/** A sender an owner let in: they talk in DMs like an `allowFrom` entry of their account. */
const AllowedRowSchema = z.object({
  kind: z.literal("allowed"),
  ...SenderFields,
  code: z.string().min(1),
  approvedAt: z.number(),
  approvedBy: z.string(),
});

export const PairingRowSchema = z.discriminatedUnion("kind", [RequestRowSchema, AllowedRowSchema]);
export type PairingRow = z.infer<typeof PairingRowSchema>;
/** A pairing code with its sender and state, as stored. */
export type PairingRequest = z.infer<typeof RequestRowSchema>;
/** A sender let in by pairing, as stored. */
export type PairedSender = z.infer<typeof AllowedRowSchema>;

/** What asking for a code gave: a new code, or why none was made. */
export type PairingAsk =
  | { status: "created"; request: PairingRequest }
  /** the sender's last code is still alive (pending, or denied before it would have expired): one per sender at a time */
  | { status: "rate-limited"; request: PairingRequest }
  /** the account already has `maxPending` codes waiting */
  | { status: "full" };

/** Decided and expired codes are remembered this long, so a reused code is named as such. */
export const REMEMBER_MS = 24 * 3_600_000;

export const allowedKey = (channel: string, accountId: string, senderId: string) =>
  `allowed:${channel}:${accountId}:${senderId.trim().toLowerCase()}`;
export const inScope = (row: { channel: string; accountId: string }, scope?: PairingScope) =>
  !scope || (row.channel === scope.channel && row.accountId === scope.accountId);
