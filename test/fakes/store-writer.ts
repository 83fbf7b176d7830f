// A child process for the crash-safety test: patches one store as fast as it can and prints
// "ack <n>" after each patch the store has acknowledged. The parent kills it with SIGKILL.
import { createSessionStore } from "../../src/sessions/session-store.js";
import { createMemoryLogger } from "../../src/logger.js";
import { onLocalState } from "../support/local-state.js";

const [file, startArg] = process.argv.slice(2);
const store = await createSessionStore(onLocalState({ path: file!, keys: {}, logger: createMemoryLogger() }));
let n = Number(startArg);
process.stdout.write("ready\n");
for (;;) {
  const batch = Array.from({ length: 5 }, () => n++).map((i) =>
    store
      .patch(`agent:main:telegram:dm:${i % 50}`, () => ({ sessionId: `s-${i}`, updatedAt: i, label: `patch-${i}` }))
      .then(() => process.stdout.write(`ack ${i}\n`)),
  );
  await Promise.all(batch);
}
