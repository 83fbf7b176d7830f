import type { DmScope } from "../config/index.js";

/** Who a message is with: a DM sender, a group or a channel, by platform id. */
export interface PeerRef {
  kind: "dm" | "group" | "channel";
  id: string;
}

/** Everything that decides the session key of a message. */
export interface SessionKeyInput {
  agentId: string;
  channel: string;
  /** default: "default" */
  accountId?: string | undefined;
  /** absent: a DM with no known sender, which lands in the main session */
  peer?: PeerRef | undefined;
  /** Telegram forum topic of a group ("1" is General) */
  topicId?: string | undefined;
  /** a thread inside the chat, written as a `:thread:<id>` suffix (Telegram DM threads) */
  threadId?: string | undefined;
  dmScope: DmScope;
  identityLinks?: Readonly<Record<string, readonly string[]>> | undefined;
  /** default: "main" */
  mainKey?: string | undefined;
  /** default: "per-sender"; "global" puts everything into the reserved `global` session */
  scope?: "per-sender" | "global" | undefined;
}
