/** One pairing code as owners see it (implemented by the inbound layer's pairing table). */
export interface PairingCodeInfo {
  code: string;
  channel: string;
  accountId: string;
  senderId: string;
  username?: string | undefined;
  name?: string | undefined;
  createdAt: number;
  expiresAt: number;
  status: "pending" | "approved" | "denied";
}

/** A sender an owner let in by pairing code. */
export interface PairedSenderInfo {
  channel: string;
  accountId: string;
  senderId: string;
  username?: string | undefined;
  name?: string | undefined;
  approvedAt: number;
  approvedBy: string;
}

/** One channel account: the reach of an owner's `/pair` in that account's chats. */
export interface PairingScope {
  channel: string;
  accountId: string;
}

/** What approving or denying a code gave: done, or why not (the code named was another account's, used, expired or unknown). */
export type PairingResult<R extends PairingCodeInfo = PairingCodeInfo> =
  | { ok: true; request: R }
  | { ok: false; reason: "unknown" }
  | { ok: false; reason: "expired" | "used" | "wrong-account"; request: R };

/** Pairing as owners drive it from chat (`/pair`), the CLI and the gateway's methods. */
export interface PairingControl {
  /** Codes waiting for an owner and the senders let in, within `scope` (every account when absent). */
  list(scope?: PairingScope): { pending: PairingCodeInfo[]; allowed: PairedSenderInfo[] };
  /** Lets the code's sender in and tells them; `by` is who approved (`cli`, `telegram:42`). */
  approve(code: string, by: string, scope?: PairingScope): Promise<PairingResult>;
  /** Refuses the code (the sender is not told). */
  deny(code: string, by: string, scope?: PairingScope): Promise<PairingResult>;
}
