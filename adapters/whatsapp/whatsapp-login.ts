import { readFile, rm } from "node:fs/promises";
import path from "node:path";
import { BufferJSON, DisconnectReason } from "baileys";
import qrcode from "qrcode-terminal";
import { type ChannelLoginRequest, type Config, DEFAULT_ACCOUNT_ID } from "../../src/index.js";
import { type WhatsAppAuth, openAuthState, removeAuthState } from "./auth-state.js";
import { readAccountStatus } from "./account-status.js";
import { e164Of } from "./jids.js";
import { type WhatsAppAccount, resolveWhatsAppAccounts, whatsappAccount } from "./whatsapp-accounts.js";
import type { WhatsAppConfig } from "./whatsapp-config.js";
import { statusCodeOf } from "./whatsapp-errors.js";
import { type WhatsAppSocket, type WhatsAppSocketFactory, baileysSocketFactory } from "./whatsapp-socket.js";

/** What `channels login|logout whatsapp` gets from the CLI. */
export type LoginRequest = ChannelLoginRequest;

/** `channels.whatsapp` of a config checked against the channel table. */
const sectionOf = (config: Config) => config.channels.whatsapp as WhatsAppConfig | undefined;

/** Dependencies of {@link createWhatsAppLogin}. */
export interface WhatsAppLoginDeps {
  /** the real baileys socket when not given */
  socketFactory?: WhatsAppSocketFactory;
  /** qrcode-terminal's small rendering when not given */
  renderQr?: (text: string) => Promise<string>;
  /** how long to wait for the phone (3 minutes when not given) */
  timeoutMs?: number;
}

const renderSmallQr = (text: string) =>
  new Promise<string>((resolve) => qrcode.generate(text, { small: true }, (rendered) => resolve(rendered)));

/** The account `--account` names, with its authDir from the config (or the default one). */
function accountOf(config: Config, home: string, accountId: string | undefined): WhatsAppAccount {
  return whatsappAccount(sectionOf(config), home, accountId ?? DEFAULT_ACCOUNT_ID);
}

/** Reads an earlier version's `creds.json` (not imported yet) without creating anything: the linked number, or undefined. */
async function legacyNumber(authDir: string): Promise<string | undefined> {
  try {
    const creds = JSON.parse(await readFile(path.join(authDir, "creds.json"), "utf8"), BufferJSON.reviver) as {
      me?: { id?: string };
    };
    return e164Of(creds.me?.id);
  } catch {
    return undefined; // no credentials (or unreadable ones): not linked
  }
}

/** Runs sockets until the device is linked (baileys restarts once after the scan), the phone refuses, or time runs out. */
function linkDevice(auth: WhatsAppAuth, account: WhatsAppAccount, request: LoginRequest, deps: WhatsAppLoginDeps) {
  const factory = deps.socketFactory ?? baileysSocketFactory();
  const render = deps.renderQr ?? renderSmallQr;
  let socket: WhatsAppSocket | undefined;
  let pairingAsked = false;
  return new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => finish(new Error("nobody linked the device in time; run the command again")),
      deps.timeoutMs ?? 180_000,
    );
    const finish = (error: Error | undefined, number?: string) => {
      clearTimeout(timer);
      const done = socket;
      socket = undefined;
      done?.end(undefined);
      if (error) reject(error);
      else resolve(number!);
    };
    const connect = () => {
      const current = factory({ accountId: account.accountId, auth: auth.state, logger: request.logger });
      socket = current;
      current.ev.on(
        "creds.update",
        () =>
          void auth
            .saveCreds()
            .catch((err: unknown) => request.logger.error({ err }, "whatsapp credentials not saved")),
      );
      current.ev.on("connection.update", (update) => {
        if (current !== socket) return;
        if (update.qr && request.pairCode === undefined) {
          void render(update.qr).then((qr) => {
            request.print(qr);
            request.print(
              "Scan this with WhatsApp on your phone: Settings > Linked devices > Link a device. (It changes every 20 s or so.)",
            );
          });
        }
        if (update.qr && request.pairCode !== undefined && !pairingAsked) {
          pairingAsked = true;
          current
            .requestPairingCode(request.pairCode.replace(/\D/g, ""))
            .then((code) =>
              request.print(
                `Pairing code: ${code.slice(0, 4)}-${code.slice(4)}\nOn your phone: WhatsApp > Settings > Linked devices > Link a device > Link with phone number instead, then type the code.`,
              ),
            )
            .catch((err: Error) => finish(new Error(`WhatsApp gave no pairing code: ${err.message}`)));
        }
        if (update.connection === "open") {
          void auth.saveCreds().then(
            () => finish(undefined, e164Of(auth.state.creds.me?.id) ?? "(number unknown)"),
            (err: Error) => finish(err),
          );
        }
        if (update.connection === "close") {
          const code = statusCodeOf(update.lastDisconnect?.error);
          socket = undefined;
          current.end(undefined);
          // After the phone accepted the code WhatsApp asks for a restart: connect again with the new credentials.
          if (code === DisconnectReason.restartRequired) connect();
          else if (code === DisconnectReason.loggedOut)
            finish(new Error("WhatsApp refused the link (logged out); run the command again"));
          else if (code === DisconnectReason.timedOut && !auth.linked())
            finish(new Error("the QR code expired before it was scanned; run the command again"));
          else
            finish(
              new Error(
                `the connection to WhatsApp closed (${code ?? "no status"}: ${update.lastDisconnect?.error?.message ?? "unknown"})`,
              ),
            );
        }
      });
    };
    connect();
  });
}

/** Connects with linked credentials and asks WhatsApp to unlink this device; false when it could not. */
async function unlinkRemotely(
  auth: WhatsAppAuth,
  account: WhatsAppAccount,
  request: LoginRequest,
  deps: WhatsAppLoginDeps,
) {
  const socket = (deps.socketFactory ?? baileysSocketFactory())({
    accountId: account.accountId,
    auth: auth.state,
    logger: request.logger,
  });
  try {
    const opened = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), Math.min(deps.timeoutMs ?? 20_000, 20_000));
      socket.ev.on("connection.update", (update) => {
        if (update.connection === "open" || update.connection === "close") {
          clearTimeout(timer);
          resolve(update.connection === "open");
        }
      });
    });
    if (opened) await socket.logout();
    return opened;
  } catch (err) {
    request.logger.warn({ err }, "whatsapp logout request failed");
    return false;
  } finally {
    socket.end(undefined);
  }
}

/**
 * `switchboard channels login|logout|status` for WhatsApp: links the account as a device (QR code in
 * the terminal, or a pairing code), unlinks it and removes its credentials, and reports every account.
 */
export function createWhatsAppLogin(deps: WhatsAppLoginDeps = {}) {
  return {
    async login(request: LoginRequest): Promise<void> {
      const account = accountOf(request.config, request.home, request.accountId);
      const auth = await openAuthState(request.state.rows(account.accountId), {
        logger: request.logger,
        legacyDir: account.authDir,
      });
      if (auth.linked()) {
        request.print(
          `WhatsApp account "${account.accountId}" is already linked as ${e164Of(auth.state.creds.me?.id) ?? "a device"}. To link another phone, run "switchboard channels logout whatsapp" first.`,
        );
        return;
      }
      const number = await linkDevice(auth, account, request, deps);
      request.print(`Linked WhatsApp account "${account.accountId}" as ${number}. Credentials: ${request.where}`);
      request.print("Start the gateway (npm start) and message this number.");
    },

    async logout(request: LoginRequest): Promise<void> {
      const account = accountOf(request.config, request.home, request.accountId);
      const rows = request.state.rows(account.accountId);
      const auth = await openAuthState(rows, { logger: request.logger, legacyDir: account.authDir }).catch(
        () => undefined,
      );
      if (auth?.linked() && !(await unlinkRemotely(auth, account, request, deps)))
        request.print(
          "Could not reach WhatsApp to unlink: remove the device on your phone (Settings > Linked devices). The local credentials are removed anyway.",
        );
      await removeAuthState(rows);
      // An earlier version's folder (imported or not) holds the same device's keys: it goes too.
      for (const dir of [account.authDir, `${account.authDir}.imported`])
        await rm(dir, { recursive: true, force: true });
      request.print(`WhatsApp account "${account.accountId}" unlinked; credentials removed from ${request.where}.`);
    },

    async status(request: Pick<LoginRequest, "config" | "home" | "state">) {
      const section = sectionOf(request.config);
      const accounts = section
        ? resolveWhatsAppAccounts(section, request.home)
        : [accountOf(request.config, request.home, undefined)];
      return Promise.all(
        accounts.map(async (account) => {
          const rows = request.state.rows(account.accountId);
          const creds = rows.get("creds") as { me?: { id?: string } } | undefined;
          // A folder of an earlier version is imported at the next start or login; until then it is what is linked.
          const number = creds ? e164Of(creds.me?.id) : await legacyNumber(account.authDir);
          const recorded = readAccountStatus(rows);
          const savedAt = rows.savedAt("creds");
          return {
            accountId: account.accountId,
            linked: number !== undefined,
            connected: (number !== undefined && recorded?.connected) ?? false,
            ...(number && { identity: number }),
            ...(recorded?.lastError && { lastError: recorded.lastError }),
            ...(savedAt !== undefined && { credentialsSavedAt: savedAt }),
            ...(recorded && { updatedAt: recorded.updatedAt }),
          };
        }),
      );
    },
  };
}
