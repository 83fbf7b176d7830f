import path from "node:path";
import type { SwitchboardPaths } from "../config/index.js";
import type { SetAsideView } from "../inbound/inbox-rows.js";
import { createMemoryLogger } from "../logger.js";
import { openLocalState } from "../state/local-state.js";

/** The set-aside inbox entries, read from `<home>/state/inbox.json` (and the journal) without writing. */
export async function readSetAside(paths: SwitchboardPaths): Promise<SetAsideView[]> {
  const dir = path.join(paths.home, "state");
  // zod and the inbox load with the command that reads them, not with every start (src/cli/main.ts)
  const [{ createInbox }, { describeSetAside }] = await Promise.all([
    import("../inbound/inbox.js"),
    import("../inbound/inbox-rows.js"),
  ]);
  const logger = createMemoryLogger();
  const state = openLocalState({ dir, logger, readOnly: true });
  const inbox = await createInbox({ state, path: path.join(dir, "inbox.json"), logger });
  return inbox.listSetAside().map(describeSetAside);
}
