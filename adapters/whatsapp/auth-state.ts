import { chmod, copyFile, mkdir, readFile, readdir, rm, stat, unlink } from "node:fs/promises";
import path from "node:path";
import {
  type AuthenticationCreds,
  type AuthenticationState,
  BufferJSON,
  type SignalDataTypeMap,
  initAuthCreds,
  proto,
} from "baileys";
import { type Logger, writeFileAtomic } from "../../src/index.js";

/** One account's linked-device credentials, as the socket needs them, and how to save them. */
export interface WhatsAppAuth {
  state: AuthenticationState;
  /** writes `creds.json` atomically, keeping the previous good copy as `creds.json.bak` */
  saveCreds(): Promise<void>;
  /** true once WhatsApp accepted this device (`creds.me` is set) */
  linked(): boolean;
}

const CREDS = "creds.json";
const BACKUP = "creds.json.bak";

// Key ids may hold "/" and ":" (`session-123:4`), which are not file name characters everywhere.
const fileNameOf = (name: string) => name.replace(/\//g, "__").replace(/:/g, "-");

/** One file at a time per name: reads and writes of the same key never interleave. */
function perFileQueue() {
  const tails = new Map<string, Promise<unknown>>();
  return {
    run<T>(name: string, work: () => Promise<T>): Promise<T> {
      const result = (tails.get(name) ?? Promise.resolve()).then(work, work);
      const tail = result.catch(() => undefined);
      tails.set(name, tail);
      void tail.then(() => tails.get(name) === tail && tails.delete(name));
      return result;
    },
  };
}

async function readJson(file: string): Promise<unknown> {
  return JSON.parse(await readFile(file, "utf8"), BufferJSON.reviver) as unknown;
}

function isCreds(value: unknown): value is AuthenticationCreds {
  return typeof value === "object" && value !== null && "noiseKey" in value && "signedIdentityKey" in value;
}

/**
 * Reads `creds.json`; when it is missing nothing is linked yet. When it is unreadable (a crash of an
 * older writer, a disk hiccup) the backup is restored and the bad file kept as `creds.json.corrupt-<ms>`.
 */
async function readCreds(dir: string, logger: Logger): Promise<AuthenticationCreds | undefined> {
  const file = path.join(dir, CREDS);
  try {
    const creds = await readJson(file);
    if (isCreds(creds)) return creds;
    throw new Error("creds.json does not hold linked-device credentials");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    const backup = await readJson(path.join(dir, BACKUP)).catch(() => undefined);
    const aside = `${file}.corrupt-${Date.now()}`;
    await copyFile(file, aside).catch(() => undefined); // best effort: keep the evidence
    if (!isCreds(backup)) {
      logger.error({ authDir: dir, err }, "whatsapp creds.json is corrupt and there is no usable backup");
      throw new Error(
        `${file} is corrupt and ${BACKUP} cannot replace it (the bad file is kept as ${path.basename(aside)}). Run "switchboard channels login whatsapp" to link again.`,
      );
    }
    logger.warn({ authDir: dir, err }, "whatsapp creds.json is corrupt: restored the backup");
    await writeFileAtomic(file, JSON.stringify(backup, BufferJSON.replacer));
    return backup;
  }
}

/** Creates `dir` with mode 0700 (it holds the keys of a device linked to someone's WhatsApp). */
async function ensureAuthDir(dir: string): Promise<void> {
  const info = await stat(dir).catch(() => undefined);
  if (info && !info.isDirectory()) throw new Error(`${dir} is not a directory: remove it or set another authDir`);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700);
}

/**
 * The auth state of one account in `dir`, the same files baileys' `useMultiFileAuthState` keeps
 * (`creds.json` and one `<type>-<id>.json` per signal key), but every write is atomic, so a crash
 * never leaves half a file, and `creds.json` has a backup restored when it is corrupt.
 */
export async function openAuthState(dir: string, logger: Logger): Promise<WhatsAppAuth> {
  await ensureAuthDir(dir);
  // A write cut short by a crash leaves only its temp file (the rename never happened): remove it.
  for (const name of await readdir(dir)) if (name.endsWith(".tmp")) await rm(path.join(dir, name), { force: true });
  const creds = (await readCreds(dir, logger)) ?? initAuthCreds();
  const locks = perFileQueue();
  const write = (name: string, value: unknown) =>
    locks.run(name, () =>
      writeFileAtomic(path.join(dir, fileNameOf(name)), JSON.stringify(value, BufferJSON.replacer)),
    );
  const remove = (name: string) =>
    locks.run(name, () => unlink(path.join(dir, fileNameOf(name))).catch(() => undefined));

  const state: AuthenticationState = {
    creds,
    keys: {
      async get<T extends keyof SignalDataTypeMap>(type: T, ids: string[]) {
        const data: { [id: string]: SignalDataTypeMap[T] } = {};
        for (const id of ids) {
          const name = fileNameOf(`${type}-${id}.json`);
          let value = await locks.run(name, () => readJson(path.join(dir, name)).catch(() => null));
          if (type === "app-state-sync-key" && value)
            value = proto.Message.AppStateSyncKeyData.fromObject(value as Record<string, unknown>);
          if (value) data[id] = value as SignalDataTypeMap[T];
        }
        return data;
      },
      async set(data) {
        const tasks: Promise<unknown>[] = [];
        for (const [category, entries] of Object.entries(data)) {
          for (const [id, value] of Object.entries(entries ?? {})) {
            const name = fileNameOf(`${category}-${id}.json`);
            tasks.push(value ? write(name, value) : remove(name));
          }
        }
        await Promise.all(tasks);
      },
    },
  };

  return {
    state,
    linked: () => state.creds.me !== undefined,
    async saveCreds() {
      await locks.run(CREDS, async () => {
        const file = path.join(dir, CREDS);
        // The file on disk parsed when it was last written by us: it becomes the backup first.
        await copyFile(file, path.join(dir, BACKUP)).catch(() => undefined);
        await writeFileAtomic(file, JSON.stringify(state.creds, BufferJSON.replacer));
      });
    },
  };
}

/** When `creds.json` was last written (the device's keys were refreshed), or undefined when not linked. */
export async function credsSavedAt(dir: string): Promise<number | undefined> {
  const info = await stat(path.join(dir, CREDS)).catch(() => undefined);
  return info?.mtimeMs;
}

/** Removes every credential file of the account (logout); the directory itself stays, empty. */
export async function removeAuthState(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
  await ensureAuthDir(dir);
}
