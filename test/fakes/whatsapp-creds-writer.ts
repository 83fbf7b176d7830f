// A child process for the WhatsApp credentials crash test: saves the account's credentials as fast
// as it can, each time with a new counter in them, and prints "ack <n>" after each acknowledged save.
// The parent kills it with SIGKILL.
import { openAuthState } from "../../adapters/whatsapp/index.js";
import { createMemoryLogger } from "../../src/logger.js";
import { BOT_ME } from "./fake-whatsapp.js";

const [dir, startArg] = process.argv.slice(2);
const auth = await openAuthState(dir!, createMemoryLogger());
let n = Number(startArg);
auth.state.creds.me = { ...BOT_ME, name: `save-${n - 1}` };
// One save before "ready": the device counts as linked from the first moment the parent may kill it.
await auth.saveCreds();
process.stdout.write("ready\n");
for (;;) {
  auth.state.creds.me = { ...BOT_ME, name: `save-${n}` };
  await auth.saveCreds();
  process.stdout.write(`ack ${n}\n`);
  n++;
}
