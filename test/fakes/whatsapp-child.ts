// The WhatsApp side of platform-gateway-process.ts (SB_CHANNEL=whatsapp): the fake WhatsApp is
// in-process (a socket factory), so each gateway process builds its own, and the test drives it
// through the process's pipes. A device is linked in the process's home (an earlier version's auth
// folder, imported into the channel state at the account's first start) under the name
// "linked by pid <pid>", so a later holder shows whose credentials it connected with. Lines:
//   stdout "wa-socket <creds.me.name>"            the adapter created a socket (it holds the device)
//   stdout "wa-sent <json { jid, text }>"          the fake accepted a send
//   stdin  "wa-in <text>"                          a DM from Ada on the newest socket
//   stdin  "wa-dm <digits> <text>"                 a DM from +<digits> on the newest socket (its own chat)
//   stdout "wa-read <id>"                          the adapter sent a read receipt (it stored the message)
//   stdout "wa-offline <digits> <text>"            a DM pushed while the newest socket was closed: not delivered
//                                                  (WhatsApp hands such messages over at the next connect, as
//                                                  offline messages: not modelled here)
import { createInterface } from "node:readline";
import { CHANNELS } from "../../adapters/index.js";
import { createWhatsAppChannel } from "../../adapters/whatsapp/channel.js";
import { type WhatsAppSocketFactory, defaultAuthDir } from "../../adapters/whatsapp/index.js";
import { BOT_ME, createFakeWhatsApp, linkDevice, waMessage } from "./fake-whatsapp.js";

/** The fake's Ada: owner and allowed. */
export const WA_ADA = { e164: "+15550009999", jid: "15550009999@s.whatsapp.net" };

/** Links a device in `home`, starts the fake and its control lines; returns the channel table to build the adapters from. */
export async function whatsappInChild(home: string): Promise<typeof CHANNELS> {
  await linkDevice(defaultAuthDir(home, "default"), { ...BOT_ME, name: `linked by pid ${process.pid}` });
  const fake = createFakeWhatsApp();
  const factory: WhatsAppSocketFactory = (options) => {
    const socket = fake.factory(options);
    process.stdout.write(`wa-socket ${options.auth.creds.me?.name}\n`);
    const send = socket.sendMessage.bind(socket) as (...args: unknown[]) => Promise<unknown>;
    const read = socket.readMessages.bind(socket);
    Object.assign(socket, {
      async readMessages(keys: Parameters<typeof read>[0]) {
        await read(keys);
        for (const key of keys) process.stdout.write(`wa-read ${key.id}\n`);
      },
      async sendMessage(jid: string, content: { text?: string }, ...rest: unknown[]) {
        // SB_WA_SEND_DELAY_MS: each send takes this long (replies still in flight when a test kills a gateway).
        await new Promise((resolve) => setTimeout(resolve, Number(process.env.SB_WA_SEND_DELAY_MS ?? 0)));
        const sent = await send(jid, content, ...rest);
        process.stdout.write(`wa-sent ${JSON.stringify({ jid, text: content.text ?? "" })}\n`);
        return sent;
      },
    });
    return socket;
  };
  const lines = createInterface({ input: process.stdin });
  let received = 0;
  lines.on("line", (line) => {
    const dm = /^wa-dm (\d+) (.*)$/.exec(line);
    const text = dm?.[2] ?? /^wa-in (.*)$/.exec(line)?.[1];
    // Message ids unique across processes: the inbox drops a repeated id as a duplicate.
    const key = { remoteJid: dm ? `${dm[1]}@s.whatsapp.net` : WA_ADA.jid, id: `IN-${process.pid}-${++received}` };
    if (text === undefined) return;
    if (fake.sockets.at(-1)?.ended) return void process.stdout.write(`wa-offline ${dm?.[1] ?? "ada"} ${text}\n`);
    fake.deliver([waMessage({ key, message: { conversation: text }, pushName: "Ada" })]);
  });
  return CHANNELS.map((c) => (c.id === "whatsapp" ? createWhatsAppChannel({ socketFactory: factory }) : c));
}
