// Crash tests: run a writer script from test/fakes/ that prints "ready" and then "ack <n>" for
// every write it has had acknowledged, SIGKILL it after a while, and return what it acknowledged.
import { spawn } from "node:child_process";
import path from "node:path";
import { compiledScript } from "./compiled-script.js";

/**
 * Runs `test/fakes/<script> ...args`, kills it `killAfterMs` after "ready"
 * or sooner: as soon as it prints the line `killAt`, or once the condition `killAt` holds (polled
 * every 20 ms), when given; returns the acked numbers.
 */
export async function runAndKill(
  script: string,
  args: string[],
  killAfterMs: number,
  killAt?: string | (() => boolean | Promise<boolean>),
): Promise<number[]> {
  const file = path.resolve(import.meta.dirname, "../fakes", script);
  const proc = spawn(process.execPath, [await compiledScript(file), ...args], { stdio: ["ignore", "pipe", "inherit"] });
  const killAtLine = typeof killAt === "string" ? killAt : undefined;
  const acked: number[] = [];
  let buffer = "";
  let ready!: () => void;
  const isReady = new Promise<void>((resolve) => (ready = resolve));
  let atLine!: () => void;
  const sawLine = new Promise<void>((resolve) => (atLine = resolve));
  proc.stdout.on("data", (chunk: Buffer) => {
    buffer += chunk.toString();
    const lines = buffer.split("\n");
    buffer = lines.pop()!;
    for (const line of lines) {
      if (line === "ready") ready();
      else if (line === killAtLine) {
        proc.kill("SIGKILL");
        atLine();
      } else if (line.startsWith("ack ")) acked.push(Number(line.slice(4)));
    }
  });
  const exited = new Promise((resolve) => proc.on("exit", resolve));
  await Promise.race([isReady, exited]);
  const timeUp = new Promise((resolve) => setTimeout(resolve, killAfterMs));
  let over = false;
  if (typeof killAt === "function") await Promise.race([holds(killAt, () => over), exited, timeUp]);
  else if (killAtLine === undefined) await timeUp;
  else await Promise.race([sawLine, exited, timeUp]);
  over = true;
  proc.kill("SIGKILL");
  await exited;
  return acked;
}

/** Settles once `condition` holds, polled every 20 ms until `over()`. */
async function holds(condition: () => boolean | Promise<boolean>, over: () => boolean): Promise<void> {
  while (!over() && !(await condition())) await new Promise((resolve) => setTimeout(resolve, 20));
}
