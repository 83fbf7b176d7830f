import { createMemoryLogger } from "../../src/logger.js";
import { openLocalState } from "../../src/state/local-state.js";
import type { StatePort } from "../../src/state/state-port.js";

/**
 * A local port in `dir` that records, in order, each table opened and closed on it and its own
 * close (`events`: "open outbox", "close outbox", "close port"), and the path each table was
 * opened with (`opened`, by table name).
 */
export function recordingPort(dir: string) {
  const inner = openLocalState({ dir, logger: createMemoryLogger() });
  const events: string[] = [];
  const opened = new Map<string, string>();
  const port: StatePort = {
    readOnly: false,
    async table(spec) {
      const table = await inner.table(spec);
      events.push(`open ${spec.name}`);
      opened.set(spec.name, spec.path);
      return Object.assign(Object.create(table), {
        async close() {
          events.push(`close ${spec.name}`);
          await table.close();
        },
      });
    },
    commit: (fn) => inner.commit(fn),
    flush: () => inner.flush(),
    async close() {
      events.push("close port");
      await inner.close();
    },
  };
  return { port, events, opened };
}
