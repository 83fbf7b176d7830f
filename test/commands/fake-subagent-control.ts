// A sub-agent control for command tests: a fixed list per requester, and a record of every stop.
import type { SubagentControl, SubagentInfo } from "../../src/commands/command-deps.js";

/** A {@link SubagentControl} over `infos` whose `stop` marks running ones stopped and counts them. */
export interface FakeSubagentControl extends SubagentControl {
  readonly stops: Array<{ requesterKey: string; runId?: string }>;
}

/** Sub-agents as given (all spawned by `requesterKey`, newest first); `stop` reports `stopCount` when set. */
export function createFakeSubagentControl(
  requesterKey: string,
  infos: SubagentInfo[] = [],
  options: { stopCount?: number } = {},
): FakeSubagentControl {
  const stops: FakeSubagentControl["stops"] = [];
  return {
    stops,
    list: (key) => (key === requesterKey ? infos.map((info) => ({ ...info })) : []),
    async stop(key, runId) {
      stops.push({ requesterKey: key, ...(runId && { runId }) });
      if (key !== requesterKey) return 0;
      const running = infos.filter(
        (info) => info.status === "running" && (runId === undefined || info.runId === runId),
      );
      for (const info of running) Object.assign(info, { status: "stopped", endedAt: info.startedAt + 1 });
      return options.stopCount ?? running.length;
    },
  };
}
