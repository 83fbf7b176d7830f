// A fake WhatsApp for the adapter: each socket the adapter creates is built on baileys' own event
// emitter (makeEventBuffer), so messages are real `proto.WebMessageInfo` shapes delivered the way the
// real socket delivers them, and every send, receipt and presence is recorded at the socket boundary.
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import {
  type AuthenticationState,
  type BaileysEventMap,
  BufferJSON,
  type WAMessage,
  type WAMessageKey,
  initAuthCreds,
  makeEventBuffer,
  proto,
} from "baileys";
import { pino } from "pino";
import type { WhatsAppSocket, WhatsAppSocketFactory } from "../../adapters/whatsapp/index.js";

/** The linked device in tests: phone +1 555 000 1111, LID 88880001111. */
export const BOT_ME = { id: "15550001111:7@s.whatsapp.net", lid: "88880001111:7@lid", name: "Switchboard" };

/** One message the fake platform accepted. */
interface FakeWhatsAppSend {
  jid: string;
  text: string;
  /** the id of the message it quotes */
  quotedId?: string;
  id: string;
  /** which socket (connection) sent it, 0-based */
  socket: number;
}

/** How the next send fails. */
export type FakeWhatsAppFailure = "connection_closed" | "rate_limited" | "bad_request";

/** Options of {@link createFakeWhatsApp}. */
export interface FakeWhatsAppOptions {
  /** group JID -> subject */
  groups?: Record<string, string>;
  /** LID (`<digits>@lid`) -> phone JID, as the socket's LID mapping knows them */
  lids?: Record<string, string>;
  /** phone numbers (`+<digits>`) that have no WhatsApp */
  notOnWhatsApp?: string[];
  /** default true: a new socket opens on the next tick */
  autoOpen?: boolean;
}

function boom(message: string, statusCode: number): Error {
  return Object.assign(new Error(message), { isBoom: true, output: { statusCode, payload: {} } });
}

const FAILURES: Record<FakeWhatsAppFailure, () => Error> = {
  connection_closed: () => boom("Connection Closed", 428),
  rate_limited: () => boom("rate-overlimit", 429),
  bad_request: () => boom("bad-request", 400),
};

let nextId = 1;

/** A real `proto.WebMessageInfo`, plus the 7.x key fields (`remoteJidAlt`, `participantAlt`) outside the proto. */
export function waMessage(fields: {
  key: WAMessageKey;
  message: Record<string, unknown>;
  pushName?: string;
  messageTimestamp?: number;
}): WAMessage {
  const { remoteJidAlt, participantAlt, ...key } = fields.key;
  const built = proto.WebMessageInfo.fromObject({
    messageTimestamp: 1767225600,
    ...fields,
    key: { fromMe: false, ...key, id: key.id ?? `IN${nextId++}` },
  }) as WAMessage;
  if (remoteJidAlt) built.key.remoteJidAlt = remoteJidAlt;
  if (participantAlt) built.key.participantAlt = participantAlt;
  return built;
}

/**
 * Writes linked credentials (with `creds.me`) into `authDir` as an earlier version's finished login
 * did (`creds.json` in the folder): the adapter or `channels login` imports it at its next start.
 */
export async function linkDevice(authDir: string, me: typeof BOT_ME = BOT_ME): Promise<void> {
  const creds = { ...initAuthCreds(), me, registered: true };
  await mkdir(authDir, { recursive: true, mode: 0o700 });
  await writeFile(path.join(authDir, "creds.json"), JSON.stringify(creds, BufferJSON.replacer));
}

type FakeSocket = {
  ev: ReturnType<typeof makeEventBuffer>;
  ended: boolean;
  auth: AuthenticationState;
  end(error: Error | undefined): void;
};

/** The fake platform: a socket factory for the adapter and the knobs and records of the tests. */
export function createFakeWhatsApp(options: FakeWhatsAppOptions = {}) {
  const sockets: FakeSocket[] = [];
  const sent: FakeWhatsAppSend[] = [];
  const reads: WAMessageKey[] = [];
  const presences: Array<{ type: string; jid?: string }> = [];
  const failures: FakeWhatsAppFailure[] = [];
  const missing = new Set((options.notOnWhatsApp ?? []).map((n) => `${n.replace(/^\+/, "")}@s.whatsapp.net`));
  const silent = pino({ level: "silent" });

  let failCreates = 0;
  let createAttempts = 0;
  const factory: WhatsAppSocketFactory = ({ auth }) => {
    createAttempts += 1;
    if (failCreates > 0) {
      failCreates -= 1;
      throw new Error("socket could not be created");
    }
    const index = sockets.length;
    const ev = makeEventBuffer(silent);
    const socket = {
      ev,
      auth,
      ended: false,
      user: auth.creds.me,
      async sendMessage(jid: string, content: { text?: string }, opts?: { quoted?: WAMessage }): Promise<WAMessage> {
        const failure = failures.shift();
        if (failure) throw FAILURES[failure]();
        if (socket.ended) throw boom("Connection Closed", 428);
        const id = `BOT${nextId++}`;
        const quotedId = opts?.quoted?.key?.id ?? undefined;
        sent.push({ jid, text: content.text ?? "", id, socket: index, ...(quotedId && { quotedId }) });
        const echo = waMessage({
          key: { remoteJid: jid, fromMe: true, id },
          message: { conversation: content.text ?? "" },
        });
        // baileys emits our own sends back as an upsert; the adapter must never answer them.
        queueMicrotask(() => ev.emit("messages.upsert", { type: "append", messages: [echo] }));
        return echo;
      },
      async groupMetadata(jid: string) {
        const subject = options.groups?.[jid];
        if (subject === undefined) throw boom("item-not-found", 404);
        return { id: jid, subject, participants: [] } as unknown as Awaited<
          ReturnType<WhatsAppSocket["groupMetadata"]>
        >;
      },
      async readMessages(keys: WAMessageKey[]) {
        reads.push(...keys);
      },
      async sendPresenceUpdate(type: string, jid?: string) {
        presences.push({ type, ...(jid && { jid }) });
      },
      async onWhatsApp(...jids: string[]) {
        return jids.map((jid) => ({ jid, exists: !missing.has(jid) }));
      },
      signalRepository: {
        lidMapping: { getPNForLID: async (lid: string) => options.lids?.[lid] ?? null },
      },
      async requestPairingCode() {
        return "ABCD1234";
      },
      async logout() {
        socket.end(boom("Intentional Logout", 401));
      },
      end(error: Error | undefined) {
        if (socket.ended) return;
        socket.ended = true;
        ev.emit("connection.update", { connection: "close", lastDisconnect: { error, date: new Date() } });
      },
    };
    sockets.push(socket);
    queueMicrotask(() => ev.emit("connection.update", { connection: "connecting" }));
    if (options.autoOpen !== false)
      setTimeout(() => !socket.ended && ev.emit("connection.update", { connection: "open" }), 1);
    return socket as unknown as WhatsAppSocket;
  };

  const current = () => {
    const socket = sockets.at(-1);
    if (!socket) throw new Error("the adapter has not created a socket yet");
    return socket;
  };

  return {
    factory,
    sent,
    reads,
    presences,
    sockets,
    /** the newest socket */
    current,
    /** delivers messages on the newest socket as WhatsApp would (`notify` = live) */
    deliver(messages: WAMessage[], type: BaileysEventMap["messages.upsert"]["type"] = "notify") {
      current().ev.emit("messages.upsert", { type, messages });
    },
    /** WhatsApp closes the newest socket with this status (428 closed, 408 lost, 401 logged out) */
    close(statusCode: number, message = "Connection Closed") {
      current().end(boom(message, statusCode));
    },
    /** opens the newest socket (when created with autoOpen: false) */
    open() {
      current().ev.emit("connection.update", { connection: "open" });
    },
    /** the next `count` socket creations throw (as a broken build of the socket would) */
    failNextCreates(count: number) {
      failCreates += count;
    },
    /** how many times the adapter asked for a socket */
    createAttempts: () => createAttempts,
    failNextSend(failure: FakeWhatsAppFailure) {
      failures.push(failure);
    },
    /** from now on `+<digits>` has no WhatsApp account */
    removeNumber(e164: string) {
      missing.add(`${e164.replace(/^\+/, "")}@s.whatsapp.net`);
    },
  };
}

/** A fake platform as {@link createFakeWhatsApp} returns it. */
export type FakeWhatsApp = ReturnType<typeof createFakeWhatsApp>;
