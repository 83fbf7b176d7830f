import type { ChannelRows } from "../../src/index.js";

/** How one account's device is doing, as the running gateway last saw it. */
export interface AccountStatus {
  accountId: string;
  /** the device is linked (credentials with a number exist) */
  linked: boolean;
  /** the socket is open */
  connected: boolean;
  /** the linked number, `+<digits>` */
  number?: string;
  /** why the last connection failed, or what the owner must do */
  lastError?: string;
  /** ms; when the device's credentials were last written */
  credentialsSavedAt?: number;
  /** ms; when this status was recorded */
  updatedAt: number;
}

const STATUS = "status";

/** Records the status as the account's `status` row of the channel state: written by the gateway, read by `channels status`. */
export async function writeAccountStatus(rows: ChannelRows, status: AccountStatus): Promise<void> {
  await rows.write({ [STATUS]: status });
}

/** The last recorded status, or undefined when the gateway never ran this account. */
export function readAccountStatus(rows: ChannelRows): AccountStatus | undefined {
  return rows.get(STATUS) as AccountStatus | undefined;
}
