import { readFile, readdir, rename } from "node:fs/promises";
import path from "node:path";
import {
  type AuthenticationCreds,
  type AuthenticationState,
  BufferJSON,
  type SignalDataTypeMap,
  initAuthCreds,
  proto,
} from "baileys";
import type { ChannelRows, Logger } from "../../src/index.js";

/** One account's linked-device credentials, as the socket needs them, and how to save them. */
export interface WhatsAppAuth {
  state: AuthenticationState;
  /** stores the credentials (one row, written whole); settles once durable */
  saveCreds(): Promise<void>;
  /** true once WhatsApp accepted this device (`creds.me` is set) */
  linked(): boolean;
  /** when the credentials were last stored (ms), or undefined before the first save */
  savedAt(): number | undefined;
}

const CREDS = "creds";
const BACKUP = "creds.json.bak";

// A key's row is named as baileys' multi-file store names its file (without `.json`), so the
// folder of an earlier version imports one file to one row. Key ids may hold "/" and ":".
const rowNameOf = (name: string) => name.replace(/\//g, "__").replace(/:/g, "-");

/** A stored value back as baileys holds it (Buffers revived). */
const revive = (value: unknown): unknown =>
  value === undefined ? undefined : (JSON.parse(JSON.stringify(value), BufferJSON.reviver) as unknown);
/** A value as JSON rows hold it (Buffers as `{ type: "Buffer", data }`). */
const stored = (value: unknown): unknown => JSON.parse(JSON.stringify(value, BufferJSON.replacer)) as unknown;

function isCreds(value: unknown): value is AuthenticationCreds {
  return typeof value === "object" && value !== null && "noiseKey" in value && "signedIdentityKey" in value;
}

async function readJson(file: string): Promise<unknown> {
  return JSON.parse(await readFile(file, "utf8")) as unknown;
}

/** An earlier version's `creds.json`, or its backup when it is unreadable; throws when neither is usable. */
async function legacyCreds(dir: string, logger: Logger): Promise<unknown> {
  const file = path.join(dir, "creds.json");
  const creds = await readJson(file).catch(() => undefined);
  if (isCreds(revive(creds))) return creds;
  const backup = await readJson(path.join(dir, BACKUP)).catch(() => undefined);
  if (!isCreds(revive(backup)))
    throw new Error(
      `${file} is corrupt and ${BACKUP} cannot replace it (both are kept in ${dir}). Run "switchboard channels login whatsapp" to link again.`,
    );
  logger.warn({ authDir: dir }, "whatsapp creds.json is corrupt: imported the backup");
  return backup;
}

/**
 * An earlier version kept the account in a folder (`creds.json` and one `<type>-<id>.json` per
 * signal key): when the rows hold no credentials, the folder is imported in one write and renamed
 * `<dir>.imported` (kept, never deleted).
 */
async function importAuthDir(rows: ChannelRows, dir: string, logger: Logger): Promise<void> {
  if (rows.get(CREDS) !== undefined) return;
  const names = await readdir(dir).catch(() => undefined);
  if (!names?.includes("creds.json")) return;
  const changes: Record<string, unknown> = { [CREDS]: await legacyCreds(dir, logger) };
  for (const name of names.filter((n) => n.endsWith(".json") && n !== "creds.json")) {
    const value = await readJson(path.join(dir, name)).catch(() => undefined);
    if (value !== undefined) changes[name.slice(0, -".json".length)] = value;
  }
  await rows.write(changes);
  await rename(dir, `${dir}.imported`);
  logger.info({ authDir: dir, keys: Object.keys(changes).length - 1 }, "whatsapp credentials folder imported");
}

/** The signal key store over the rows: a `set` of many keys is one write, all of it stored or none. */
function keyStore(rows: ChannelRows): AuthenticationState["keys"] {
  return {
    async get<T extends keyof SignalDataTypeMap>(type: T, ids: string[]) {
      const data: { [id: string]: SignalDataTypeMap[T] } = {};
      for (const id of ids) {
        const row = rows.get(rowNameOf(`${type}-${id}`));
        if (row === undefined || row === null) continue;
        let value = revive(row);
        if (type === "app-state-sync-key")
          value = proto.Message.AppStateSyncKeyData.fromObject(value as Record<string, unknown>);
        data[id] = value as SignalDataTypeMap[T];
      }
      return data;
    },
    async set(data) {
      const changes: Record<string, unknown> = {};
      for (const [category, entries] of Object.entries(data))
        for (const [id, value] of Object.entries(entries ?? {}))
          changes[rowNameOf(`${category}-${id}`)] = value ? stored(value) : null;
      await rows.write(changes);
    },
  };
}

/**
 * The auth state of one account on its rows of the channel state (`state/` on local, PostgreSQL
 * rows on postgres): the credentials are one row, each signal key one row, and a `keys.set` of
 * many keys is one commit, so a crash or a refused write never leaves half of it. An earlier
 * version's folder (`legacyDir`) is imported once.
 */
export async function openAuthState(
  rows: ChannelRows,
  deps: { logger: Logger; legacyDir: string; readOnly?: boolean },
): Promise<WhatsAppAuth> {
  if (!deps.readOnly) await importAuthDir(rows, deps.legacyDir, deps.logger);
  const saved = rows.get(CREDS);
  const creds = saved === undefined ? initAuthCreds() : revive(saved);
  if (!isCreds(creds))
    throw new Error(
      `the stored WhatsApp credentials are not readable. Run "switchboard channels login whatsapp" to link again.`,
    );
  const state: AuthenticationState = { creds, keys: keyStore(rows) };
  return {
    state,
    linked: () => state.creds.me !== undefined,
    savedAt: () => rows.savedAt(CREDS),
    saveCreds: () => rows.write({ [CREDS]: stored(state.creds) }),
  };
}

/** Removes every row of the account (logout): credentials and keys, in one write. */
export async function removeAuthState(rows: ChannelRows): Promise<void> {
  await rows.write(Object.fromEntries(rows.keys().map((key) => [key, null])));
}
