// A child process for the state contract's crash test. Arguments: the module that opens the port
// under test (it exports `openState(dir)`), the state folder, and the first write number. It builds
// the session store, inbox and outbox on that port and streams writes, five write numbers at a
// time. For write number n it prints "begin <n>", then: patches session `crashSessionKey(n)`
// (`updatedAt: n`, `totalTokens` + 1), claims inbound message n and marks the even ones done,
// enqueues outbox item `reply:<n>`, claims its first chunk and records it sent as message `m<n>`;
// and prints "ack <n>" once every one of those writes is acknowledged. With "commit" as fourth
// argument, write n is instead one commit of three writes: a patch of session `commitSessionKey(n)`,
// the claim of inbound message "c<n>" and the outbox item `commit:<n>`. The parent kills it with
// SIGKILL at a random moment.
import { pathToFileURL } from "node:url";
import type { StatePort } from "../../src/state/state-port.js";
import {
  commitSessionKey,
  crashSessionKey,
  dedupeKeyOf,
  inboundMessage,
  openContractStores,
  outboundItem,
} from "../contracts/state-stores.js";

const [opener, dir, startArg, mode] = process.argv.slice(2);
const { openState } = (await import(pathToFileURL(opener!).href)) as {
  openState: (dir: string) => Promise<StatePort>;
};
const state = await openState(dir!);
const { sessions, inbox, outbox } = await openContractStores(state, dir!);

/** Write n as one commit: the three writes are on disk together or not at all. */
async function commitOne(n: number): Promise<void> {
  process.stdout.write(`begin ${n}\n`);
  const writes: Promise<unknown>[] = [];
  await state.commit(() => {
    writes.push(
      sessions.patch(commitSessionKey(n), () => ({ sessionId: `c${n}`, updatedAt: n })),
      inbox.claim(dedupeKeyOf(`c${n}`), inboundMessage(`c${n}`)),
      outbox.enqueue(outboundItem(`commit:${n}`)),
    );
  });
  await Promise.all(writes);
  process.stdout.write(`ack ${n}\n`);
}

async function write(n: number): Promise<void> {
  process.stdout.write(`begin ${n}\n`);
  const session = sessions.patch(crashSessionKey(n), (current) => ({
    sessionId: `s${n % 10}`,
    updatedAt: n,
    totalTokens: (current?.totalTokens ?? 0) + 1,
  }));
  const inbound = (async () => {
    const claim = await inbox.claim(dedupeKeyOf(String(n)), inboundMessage(String(n)));
    if (claim.status !== "new") throw new Error(`inbound message ${n} was already known: ${claim.status}`);
    if (n % 2 === 0) await inbox.complete(claim.entry.id);
  })();
  const outbound = (async () => {
    const id = `reply:${n}`;
    await outbox.enqueue(outboundItem(id));
    if (!(await outbox.claim(id, 0, n))) throw new Error(`outbox item ${id} could not be claimed`);
    await outbox.update(id, { sent: 1, sending: undefined, messageIds: [`m${n}`] });
  })();
  await Promise.all([session, inbound, outbound]);
  process.stdout.write(`ack ${n}\n`);
}

let next = Number(startArg);
process.stdout.write("ready\n");
const one = mode === "commit" ? commitOne : write;
for (;;) await Promise.all(Array.from({ length: 5 }, () => one(next++)));
