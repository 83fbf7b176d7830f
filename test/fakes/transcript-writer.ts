// A child process for the transcript crash test: appends messages to one transcript as fast as it
// can and prints "ack <n>" after each append has returned. The parent kills it with SIGKILL.
import { createMemoryLogger } from "../../src/logger.js";
import { createTranscripts } from "../../src/sessions/transcripts/index.js";

const [dir, startArg] = process.argv.slice(2);
const transcripts = createTranscripts({ dir: dir!, logger: createMemoryLogger() });
let n = Number(startArg);
process.stdout.write("ready\n");
for (;;) {
  const batch = Array.from({ length: 5 }, () => n++).map((i) =>
    transcripts
      .append(
        "s1",
        { role: i % 2 ? "assistant" : "user", content: `line ${i} ${"x".repeat(i % 300)}`, runId: `r${i}` },
        { sessionId: "s1" },
      )
      .then(() => process.stdout.write(`ack ${i}\n`)),
  );
  await Promise.all(batch);
}
