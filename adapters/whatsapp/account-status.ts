import { readFile } from "node:fs/promises";
import path from "node:path";
import { writeFileAtomic } from "../../src/index.js";

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

/** `$SWITCHBOARD_HOME/channels/whatsapp/<accountId>.status.json`: written by the gateway, read by `channels status`. */
export function statusFilePath(home: string, accountId: string): string {
  return path.join(home, "channels", "whatsapp", `${accountId}.status.json`);
}

/** Records the status atomically (a crash never leaves half a file). */
export async function writeAccountStatus(home: string, status: AccountStatus): Promise<void> {
  await writeFileAtomic(statusFilePath(home, status.accountId), `${JSON.stringify(status, null, 2)}\n`);
}

/** The last recorded status, or undefined when the gateway never ran this account (or the file is unreadable). */
export async function readAccountStatus(home: string, accountId: string): Promise<AccountStatus | undefined> {
  try {
    return JSON.parse(await readFile(statusFilePath(home, accountId), "utf8")) as AccountStatus;
  } catch {
    return undefined; // no status yet: the caller shows what the credentials say
  }
}
