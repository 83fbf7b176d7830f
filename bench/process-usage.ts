import { readFile } from "node:fs/promises";

/** What the kernel counts for another process: CPU so far and resident memory now and at its peak. */
export interface ProcessUsage {
  /** user + system CPU time of every thread, ms */
  cpuMs: number;
  /** user + system CPU time of the main thread alone (the event loop), ms */
  mainThreadCpuMs: number;
  /** time the main thread was ready to run but waited for a core (`schedstat`'s run delay), ms; NaN where not counted */
  mainThreadWaitMs: number;
  rssMiB: number;
  /** the highest RSS since the process started (VmHWM) */
  peakRssMiB: number;
}

const TICKS_PER_SECOND = 100; // USER_HZ: 100 on every Linux this runs on (sysconf(_SC_CLK_TCK))

/** utime + stime of a `/proc/.../stat` text, in ms. */
function cpuMsOf(stat: string): number {
  // Fields after the command name, which may hold spaces: utime and stime are the 14th and 15th.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
}

/** Reads `/proc/<pid>` (Linux); undefined where there is no such file system. */
export async function processUsage(pid: number): Promise<ProcessUsage | undefined> {
  let stat: string;
  let mainStat: string;
  let status: string;
  let schedstat: string;
  try {
    [stat, mainStat, status, schedstat] = await Promise.all([
      readFile(`/proc/${pid}/stat`, "utf8"),
      readFile(`/proc/${pid}/task/${pid}/stat`, "utf8"),
      readFile(`/proc/${pid}/status`, "utf8"),
      // "<on-CPU ns> <waiting-for-a-core ns> <timeslices>"; absent from kernels built without scheduler statistics.
      readFile(`/proc/${pid}/task/${pid}/schedstat`, "utf8").catch(() => ""),
    ]);
  } catch {
    // Not Linux (or the process is gone): the table says "n/a" instead of a figure.
    return undefined;
  }
  const kib = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? Number.NaN);
  return {
    cpuMs: cpuMsOf(stat),
    mainThreadCpuMs: cpuMsOf(mainStat),
    mainThreadWaitMs: schedstat ? Number(schedstat.split(" ")[1]) / 1e6 : Number.NaN,
    rssMiB: kib("VmRSS") / 1024,
    peakRssMiB: kib("VmHWM") / 1024,
  };
}
