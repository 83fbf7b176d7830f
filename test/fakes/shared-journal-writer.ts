// A child process for the shared-journal crash tests: two record files ("a.json", "b.json") in one
// shared journal, written as fast as possible with a tiny snapshot threshold so snapshots run all
// the time. Change n is a single row of a ("s<n % 50>"), or, one time in ten, a commit that sets
// "c<n % 20>" to n in both a and b (on disk together or not at all): b changes rarely, so its
// lines sit in segments a's snapshots would like to delete. Prints "ack <n>" after
// each acknowledged change. With a step name as third argument it prints "at <step>" when a
// snapshot of a reaches that step and holds it there (changes go on) until the parent kills it.
import path from "node:path";
import { createMemoryLogger } from "../../src/logger.js";
import { type SnapshotStep, openRecordFile } from "../../src/state/record-file/open-record-file.js";
import { openSharedJournal } from "../../src/state/record-file/shared-journal.js";

// With "a-only" as fourth argument only a is opened and written (b's lines stay in the journal, as
// an agent's store a run never opens).
const [dir, startArg, holdAt, only] = process.argv.slice(2);
const logger = createMemoryLogger();
const journal = await openSharedJournal({ dir: dir!, logger });
const open = (name: string) =>
  openRecordFile<{ n: number }>({
    path: path.join(dir!, name),
    what: "crash test file",
    logger,
    invalidRows: "keep",
    check: (_key, row) => ({ value: row as { n: number } }),
    snapshotAfterBytes: 4_000,
    shared: { journal, table: name },
    async onSnapshotStep(step: SnapshotStep) {
      if (name !== "a.json" || step !== holdAt) return;
      process.stdout.write(`at ${step}\n`);
      await new Promise(() => {}); // held until SIGKILL
    },
  });
const aOnly = only === "a-only";
const a = await open("a.json");
const b = aOnly ? undefined : await open("b.json");
let n = Number(startArg);
process.stdout.write("ready\n");
for (;;) {
  const batch = Array.from({ length: 6 }, () => n++).map((i) => {
    const written =
      i % 10 !== 1 || !b
        ? a.set(`s${i % 50}`, { n: i })
        : journal.commit(() => {
            void a.set(`c${i % 20}`, { n: i });
            void b.set(`c${i % 20}`, { n: i });
          });
    return written.then(() => process.stdout.write(`ack ${i}\n`));
  });
  await Promise.all(batch);
}
