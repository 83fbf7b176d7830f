import path from "node:path";
import type { SwitchboardPaths } from "../config/index.js";
import type { SetAsideView } from "../inbound/inbox-rows.js";
import { createMemoryLogger } from "../logger.js";
import type { StatePort } from "../state/state-port.js";

/** The set-aside inbox entries of a read-only `state` (local: `<home>/state/inbox.json` and the journal). */
export async function readSetAside(state: StatePort, paths: SwitchboardPaths): Promise<SetAsideView[]> {
  const dir = path.join(paths.home, "state");
  // zod and the inbox load with the command that reads them, not with every start (src/cli/main.ts)
  const [{ createInbox }, { describeSetAside }] = await Promise.all([
    import("../inbound/inbox.js"),
    import("../inbound/inbox-rows.js"),
  ]);
  const logger = createMemoryLogger();
  const inbox = await createInbox({ state, path: path.join(dir, "inbox.json"), logger });
  return inbox.listSetAside().map(describeSetAside);
}
