// The idle signal of a gateway in a child process: the test writes "idle" on the child's stdin
// and the child answers "idle" on stdout once `core.idle()` settled (test/support/gateway-child.ts).
import { createInterface } from "node:readline";

/** Answers each "idle" line on stdin with an "idle" line once `core` is idle. */
export function answerIdleRequests(core: { idle(): Promise<void> }): void {
  const lines = createInterface({ input: process.stdin });
  lines.on("line", (line) => {
    if (line === "idle") void core.idle().then(() => process.stdout.write("idle\n"));
  });
  // The parent's end closing (it was killed or is done) must not keep this process alive or kill it.
  lines.on("close", () => undefined);
  process.stdin.unref?.();
}
