import type { PairingResult, PairingScope } from "../commands/pairing-control.js";
import type { StatePort, StateTable } from "../state/state-port.js";
import { newPairingCode } from "./pairing-code.js";
import {
  type PairedSender,
  type PairingAsk,
  type PairingRequest,
  type PairingRow,
  PairingRowSchema,
  REMEMBER_MS,
  allowedKey,
  inScope,
} from "./pairing-rows.js";
import { checkWith } from "../state/schema-check.js";

export type { PairedSender, PairingAsk, PairingRequest } from "./pairing-rows.js";

/** Dependencies of {@link openPairingStore}. */
export interface PairingStoreDeps {
  state: StatePort;
  /** e.g. `$SWITCHBOARD_HOME/state/pairing.json` */
  path: string;
  now?: () => number;
}

/** The opened table, the port it commits through, and the clock. */
interface Table {
  rows: StateTable<PairingRow>;
  state: StatePort;
  now: () => number;
}

/** What a sender gives when asking for a code. */
type Asker = Omit<PairingRequest, "kind" | "code" | "createdAt" | "expiresAt" | "status" | "codeSent" | "notified">;

const requests = (t: Table): PairingRequest[] =>
  [...t.rows.values()].filter((row): row is PairingRequest => row.kind === "request");
const alive = (request: PairingRequest, at: number) => request.status !== "approved" && request.expiresAt > at;
const pendingOf = (t: Table, scope: PairingScope | undefined, at: number) =>
  requests(t).filter((r) => inScope(r, scope) && r.status === "pending" && r.expiresAt > at);

/** Forgets codes decided or expired long ago (an approval not yet announced is kept). */
function prune(t: Table, at: number): void {
  for (const request of requests(t)) {
    const last = Math.max(request.expiresAt, request.decidedAt ?? 0);
    if (last + REMEMBER_MS > at || (request.status === "approved" && !request.notified)) continue;
    void t.rows.delete(`code:${request.code}`);
  }
}

/** The code decided, or why it cannot be: unknown, another account's, used or expired. */
function decideCode(
  t: Table,
  code: string,
  verdict: "approved" | "denied",
  by: string,
  scope?: PairingScope,
): PairingResult<PairingRequest> {
  const request = t.rows.get(`code:${code}`);
  if (request?.kind !== "request") return { ok: false, reason: "unknown" };
  if (!inScope(request, scope)) return { ok: false, reason: "wrong-account", request };
  if (request.status !== "pending") return { ok: false, reason: "used", request };
  const at = t.now();
  if (request.expiresAt <= at) return { ok: false, reason: "expired", request };
  return { ok: true, request: { ...request, status: verdict, decidedAt: at, decidedBy: by } };
}

async function mark(t: Table, code: string, fields: Pick<PairingRequest, "codeSent" | "notified">): Promise<void> {
  const request = t.rows.get(`code:${code}`);
  if (request?.kind === "request") await t.rows.set(`code:${code}`, { ...request, ...fields });
}

/** A code for an unknown sender, unless they have one alive or the account has `maxPending` waiting. */
async function ask(
  t: Table,
  sender: Asker,
  limits: { codeTtlSeconds: number; maxPending: number },
): Promise<PairingAsk> {
  const at = t.now();
  prune(t, at);
  const senderId = sender.senderId.trim().toLowerCase();
  const live = requests(t).find((r) => inScope(r, sender) && r.senderId === senderId && alive(r, at));
  if (live) return { status: "rate-limited", request: live };
  if (pendingOf(t, sender, at).length >= limits.maxPending) return { status: "full" };
  const code = newPairingCode((candidate) => t.rows.has(`code:${candidate}`));
  const expiresAt = at + limits.codeTtlSeconds * 1000;
  const request: PairingRequest = {
    ...sender,
    senderId,
    kind: "request",
    code,
    createdAt: at,
    expiresAt,
    status: "pending",
  };
  await t.rows.set(`code:${code}`, request);
  return { status: "created", request };
}

/** Lets the code's sender in (durably, with the decision); refused when unknown, used, expired or another account's. */
async function approve(
  t: Table,
  code: string,
  by: string,
  scope?: PairingScope,
): Promise<PairingResult<PairingRequest>> {
  const decision = decideCode(t, code, "approved", by, scope);
  if (!decision.ok) return decision;
  const { request } = decision;
  const { channel, accountId, senderId, username, name } = request;
  const allowed: PairedSender = {
    kind: "allowed",
    channel,
    accountId,
    senderId,
    ...(username !== undefined && { username }),
    ...(name !== undefined && { name }),
    code,
    approvedAt: request.decidedAt!,
    approvedBy: by,
  };
  await t.state.commit(() => {
    void t.rows.set(`code:${code}`, request);
    void t.rows.set(allowedKey(channel, accountId, senderId), allowed);
  });
  return decision;
}

/** Codes waiting for an owner (not expired) and the senders let in, oldest first. */
function list(t: Table, scope?: PairingScope): { pending: PairingRequest[]; allowed: PairedSender[] } {
  return {
    pending: pendingOf(t, scope, t.now()),
    allowed: [...t.rows.values()].filter((r): r is PairedSender => r.kind === "allowed" && inScope(r, scope)),
  };
}

/**
 * The pairing table: codes given to unknown senders and the senders owners approved. Approving
 * writes the decision and the allowed sender in one commit; nothing here touches the config file.
 */
export async function openPairingStore(deps: PairingStoreDeps) {
  const rows = await deps.state.table<PairingRow>({
    name: "pairing",
    path: deps.path,
    what: "pairing",
    invalidRows: "keep",
    check: checkWith(PairingRowSchema),
  });
  const t: Table = { rows, state: deps.state, now: deps.now ?? Date.now };
  return {
    /** True when an owner let this sender in on this account. */
    isPaired: (channel: string, accountId: string, senderId: string): boolean =>
      rows.get(allowedKey(channel, accountId, senderId))?.kind === "allowed",
    ask: (sender: Asker, limits: { codeTtlSeconds: number; maxPending: number }) => ask(t, sender, limits),
    approve: (code: string, by: string, scope?: PairingScope) => approve(t, code, by, scope),
    /** Refuses the code; its sender gets no new code until this one would have expired. */
    async deny(code: string, by: string, scope?: PairingScope): Promise<PairingResult<PairingRequest>> {
      const decision = decideCode(t, code, "denied", by, scope);
      if (decision.ok) await rows.set(`code:${code}`, decision.request);
      return decision;
    },
    list: (scope?: PairingScope) => list(t, scope),
    /** Approvals whose sender has not been told yet (made while no gateway ran). */
    unannounced: (): PairingRequest[] => requests(t).filter((r) => r.status === "approved" && !r.notified),
    /** Records that the message carrying `code` was handed to the delivery gate. */
    codeSent: (code: string) => mark(t, code, { codeSent: true }),
    /** Records that the approval notice of `code` was handed to the delivery gate. */
    announced: (code: string) => mark(t, code, { notified: true }),
    /** Writes the table in full. */
    close: () => rows.close(),
  };
}

/** The pairing table as {@link openPairingStore} returns it. */
export type PairingStore = Awaited<ReturnType<typeof openPairingStore>>;
