// The process edge of the CLI: real streams, signals and the channel adapters. bin/switchboard runs it,
// from dist/ when the build is fresh and from the sources (tsx) otherwise.
import { runCli } from "../src/cli/main.js";

const io = {
  env: process.env,
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
  cwd: process.cwd(),
  // The only place adapters meet the CLI (src/ never imports adapters/, test/architecture.test.ts). The
  // table loads with the first config a command reads and no platform SDK comes with it: each channel
  // loads its SDK when the gateway creates its adapter or `channels login` runs.
  channels: async () => (await import("../adapters/index.js")).CHANNELS,
  channelAdapters: async (...args: Parameters<typeof import("../adapters/index.js").createConfiguredAdapters>) =>
    (await import("../adapters/index.js")).createConfiguredAdapters(...args),
};
const signals = {
  onStop(stop: () => void) {
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  },
  onUnexpected(handler: (err: unknown) => void) {
    process.on("unhandledRejection", handler);
  },
};
// A reader that stops early (`switchboard sessions | head`) closes the pipe: stop quietly, as Unix tools do.
process.stdout.on("error", (err: NodeJS.ErrnoException) => {
  if (err.code === "EPIPE") process.exit(0);
  throw err;
});
process.exitCode = await runCli(process.argv.slice(2), io, signals);
