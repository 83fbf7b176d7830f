// A child process for the WhatsApp credentials crash test: opens the channel state of home `dir` on
// the local backend, saves the account's credentials and a batch of keys as fast as it can, each
// time with a new counter in them, and prints "ack <n>" after each acknowledged save. The parent
// kills it with SIGKILL.
import path from "node:path";
import { openAuthState } from "../../adapters/whatsapp/index.js";
import { createMemoryLogger } from "../../src/logger.js";
import { openChannelStates } from "../../src/state/channel-state.js";
import { openLocalState } from "../../src/state/local-state.js";
import { BOT_ME } from "./fake-whatsapp.js";

const [dir, startArg] = process.argv.slice(2);
const logger = createMemoryLogger();
const state = openLocalState({ dir: path.join(dir!, "state"), logger });
const states = await openChannelStates(state, { file: path.join(dir!, "state", "channels.json") });
const rows = states.forChannel("whatsapp").rows("default");
const auth = await openAuthState(rows, { logger, legacyDir: path.join(dir!, "none") });
let n = Number(startArg);
auth.state.creds.me = { ...BOT_ME, name: `save-${n - 1}` };
// One save before "ready": the device counts as linked from the first moment the parent may kill it.
await auth.saveCreds();
process.stdout.write("ready\n");
for (;;) {
  auth.state.creds.me = { ...BOT_ME, name: `save-${n}` };
  const batch: Record<string, { public: Buffer; private: Buffer }> = {};
  for (let k = 0; k < 50; k++) batch[String(k)] = { public: Buffer.from(`p${n}`), private: Buffer.from(`s${n}`) };
  await Promise.all([auth.saveCreds(), auth.state.keys.set({ "pre-key": batch })]);
  process.stdout.write(`ack ${n}\n`);
  n++;
}
