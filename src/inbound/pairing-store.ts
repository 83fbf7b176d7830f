import { z } from "zod";
import type { PairingResult, PairingScope } from "../commands/pairing-control.js";
import type { StatePort } from "../state/state-port.js";
import { newPairingCode } from "./pairing-code.js";

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

const PairingRowSchema = z.discriminatedUnion("kind", [RequestRowSchema, AllowedRowSchema]);
type PairingRow = z.infer<typeof PairingRowSchema>;
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
const REMEMBER_MS = 24 * 3_600_000;

const allowedKey = (channel: string, accountId: string, senderId: string) =>
  `allowed:${channel}:${accountId}:${senderId.trim().toLowerCase()}`;
const inScope = (row: { channel: string; accountId: string }, scope?: PairingScope) =>
  !scope || (row.channel === scope.channel && row.accountId === scope.accountId);

/** Dependencies of {@link openPairingStore}. */
export interface PairingStoreDeps {
  state: StatePort;
  /** e.g. `$SWITCHBOARD_HOME/state/pairing.json` */
  path: string;
  now?: () => number;
}

/**
 * The pairing table: codes given to unknown senders and the senders owners approved. Approving
 * writes the decision and the allowed sender in one commit; nothing here touches the config file.
 */
export async function openPairingStore(deps: PairingStoreDeps) {
  const now = deps.now ?? Date.now;
  const rows = await deps.state.table<PairingRow>({
    name: "pairing",
    path: deps.path,
    what: "pairing",
    invalidRows: "keep",
    check(_key, row) {
      const parsed = PairingRowSchema.safeParse(row);
      return parsed.success ? { value: parsed.data } : { error: parsed.error.message };
    },
  });
  const requests = (): PairingRequest[] =>
    [...rows.values()].filter((row): row is PairingRequest => row.kind === "request");
  const alive = (request: PairingRequest, at: number) => request.status !== "approved" && request.expiresAt > at;
  const pendingOf = (scope: PairingScope, at: number) =>
    requests().filter((r) => inScope(r, scope) && r.status === "pending" && r.expiresAt > at);

  /** Forgets codes decided or expired long ago (an approval not yet announced is kept). */
  function prune(at: number): void {
    for (const request of requests()) {
      const last = Math.max(request.expiresAt, request.decidedAt ?? 0);
      if (last + REMEMBER_MS > at || (request.status === "approved" && !request.notified)) continue;
      void rows.delete(`code:${request.code}`);
    }
  }

  function decide(
    code: string,
    verdict: "approved" | "denied",
    by: string,
    scope?: PairingScope,
  ): PairingResult<PairingRequest> {
    const request = rows.get(`code:${code}`);
    if (request?.kind !== "request") return { ok: false, reason: "unknown" };
    if (!inScope(request, scope)) return { ok: false, reason: "wrong-account", request };
    if (request.status !== "pending") return { ok: false, reason: "used", request };
    const at = now();
    if (request.expiresAt <= at) return { ok: false, reason: "expired", request };
    const decided: PairingRequest = { ...request, status: verdict, decidedAt: at, decidedBy: by };
    return { ok: true, request: decided };
  }

  async function mark(code: string, fields: Pick<PairingRequest, "codeSent" | "notified">): Promise<void> {
    const request = rows.get(`code:${code}`);
    if (request?.kind === "request") await rows.set(`code:${code}`, { ...request, ...fields });
  }

  return {
    /** True when an owner let this sender in on this account. */
    isPaired(channel: string, accountId: string, senderId: string): boolean {
      return rows.get(allowedKey(channel, accountId, senderId))?.kind === "allowed";
    },

    /** A code for an unknown sender, unless they have one alive or the account has `maxPending` waiting. */
    async ask(
      sender: Omit<PairingRequest, "kind" | "code" | "createdAt" | "expiresAt" | "status" | "codeSent" | "notified">,
      limits: { codeTtlSeconds: number; maxPending: number },
    ): Promise<PairingAsk> {
      const at = now();
      prune(at);
      const senderId = sender.senderId.trim().toLowerCase();
      const same = (r: PairingRequest) => inScope(r, sender) && r.senderId === senderId;
      const live = requests().find((r) => same(r) && alive(r, at));
      if (live) return { status: "rate-limited", request: live };
      if (pendingOf(sender, at).length >= limits.maxPending) return { status: "full" };
      const code = newPairingCode((candidate) => rows.has(`code:${candidate}`));
      const request: PairingRequest = {
        ...sender,
        senderId,
        kind: "request",
        code,
        createdAt: at,
        expiresAt: at + limits.codeTtlSeconds * 1000,
        status: "pending",
      };
      await rows.set(`code:${code}`, request);
      return { status: "created", request };
    },

    /** Lets the code's sender in (durably, with the decision); refused when unknown, used, expired or another account's. */
    async approve(code: string, by: string, scope?: PairingScope): Promise<PairingResult<PairingRequest>> {
      const decision = decide(code, "approved", by, scope);
      if (!decision.ok) return decision;
      const { request } = decision;
      const { channel, accountId, senderId, username, name } = request;
      await deps.state.commit(() => {
        void rows.set(`code:${code}`, request);
        void rows.set(allowedKey(channel, accountId, senderId), {
          kind: "allowed",
          channel,
          accountId,
          senderId,
          ...(username !== undefined && { username }),
          ...(name !== undefined && { name }),
          code,
          approvedAt: request.decidedAt!,
          approvedBy: by,
        });
      });
      return decision;
    },

    /** Refuses the code; its sender gets no new code until this one would have expired. */
    async deny(code: string, by: string, scope?: PairingScope): Promise<PairingResult<PairingRequest>> {
      const decision = decide(code, "denied", by, scope);
      if (decision.ok) await rows.set(`code:${code}`, decision.request);
      return decision;
    },

    /** Codes waiting for an owner (not expired) and the senders let in, oldest first. */
    list(scope?: PairingScope): { pending: PairingRequest[]; allowed: PairedSender[] } {
      const at = now();
      return {
        pending: requests().filter((r) => inScope(r, scope) && r.status === "pending" && r.expiresAt > at),
        allowed: [...rows.values()].filter((r): r is PairedSender => r.kind === "allowed" && inScope(r, scope)),
      };
    },

    /** Approvals whose sender has not been told yet (made while no gateway ran). */
    unannounced(): PairingRequest[] {
      return requests().filter((r) => r.status === "approved" && !r.notified);
    },

    /** Records that the message carrying `code` was handed to the delivery gate. */
    codeSent: (code: string) => mark(code, { codeSent: true }),

    /** Records that the approval notice of `code` was handed to the delivery gate. */
    announced: (code: string) => mark(code, { notified: true }),

    /** Writes the table in full. */
    close: () => rows.close(),
  };
}

/** The pairing table as {@link openPairingStore} returns it. */
export type PairingStore = Awaited<ReturnType<typeof openPairingStore>>;
