// A child process for the record-file crash tests: sets rows of one record file as fast as it can,
// with a tiny snapshot threshold so snapshots run all the time, and prints "ack <n>" after each
// acknowledged change. With a step name as third argument it prints "at <step>" when a snapshot
// reaches that step and holds the snapshot there (changes go on) until the parent kills it.
import { createMemoryLogger } from "../../src/logger.js";
import { type SnapshotStep, openRecordFile } from "../../src/state/record-file/open-record-file.js";

const [file, startArg, holdAt] = process.argv.slice(2);
const table = await openRecordFile<{ n: number }>({
  path: file!,
  what: "crash test file",
  logger: createMemoryLogger(),
  invalidRows: "keep",
  check: (_key, row) => ({ value: row as { n: number } }),
  snapshotAfterBytes: 4_000,
  async onSnapshotStep(step: SnapshotStep) {
    if (step !== holdAt) return;
    process.stdout.write(`at ${step}\n`);
    await new Promise(() => {}); // held until SIGKILL
  },
});
let n = Number(startArg);
process.stdout.write("ready\n");
for (;;) {
  const batch = Array.from({ length: 5 }, () => n++).map((i) =>
    table.set(`k${i % 50}`, { n: i }).then(() => process.stdout.write(`ack ${i}\n`)),
  );
  await Promise.all(batch);
}
