import { STRINGS } from "./command-strings.js";
import type { PairedSenderInfo, PairingCodeInfo, PairingControl, PairingResult } from "./pairing-control.js";

/** `@ada (111)`, `Ada (111)` or `111`: the sender as an owner recognizes them. */
function pairingWho(sender: Pick<PairingCodeInfo, "senderId" | "username" | "name">): string {
  const label = sender.username ? `@${sender.username.replace(/^@/, "")}` : sender.name;
  return label ? `${label} (${sender.senderId})` : sender.senderId;
}

/** `telegram` or `telegram account work`. */
function pairingWhere(account: Pick<PairingCodeInfo, "channel" | "accountId">): string {
  return account.accountId === "default" ? account.channel : `${account.channel} account ${account.accountId}`;
}

/** What approving or denying `code` gave, in one line (the chat's `/pair` and the CLI say the same). */
export function pairingResultText(code: string, verdict: "approved" | "denied", result: PairingResult): string {
  if (result.ok) return STRINGS.pairDone(verdict, result.request.code, pairingWho(result.request));
  if (result.reason === "unknown") return STRINGS.pairUnknown(code);
  if (result.reason === "expired") return STRINGS.pairExpired(result.request.code);
  if (result.reason === "used") return STRINGS.pairUsed(result.request.code, result.request.status);
  return STRINGS.pairWrongAccount(result.request.code, pairingWhere(result.request));
}

/** The codes waiting and the senders let in, one per line. */
export function pairingListText(list: ReturnType<PairingControl["list"]>, now: number): string {
  const lines = list.pending.length
    ? [STRINGS.pairTitle(list.pending.length), ...list.pending.map((p) => pendingLine(p, now))]
    : [STRINGS.pairNone];
  if (list.allowed.length) lines.push(STRINGS.pairAllowedTitle(list.allowed.length), ...list.allowed.map(allowedLine));
  return lines.join("\n");
}

const pendingLine = (p: PairingCodeInfo, now: number) =>
  STRINGS.pairLine(p.code, pairingWho(p), pairingWhere(p), Math.max(1, Math.ceil((p.expiresAt - now) / 60_000)));
const allowedLine = (a: PairedSenderInfo) => STRINGS.pairAllowedLine(pairingWho(a), pairingWhere(a));
