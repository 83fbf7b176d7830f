import path from "node:path";
import type { SwitchboardPaths } from "../config/index.js";
import { createInbox } from "../inbound/inbox.js";
import { type SetAsideView, describeSetAside } from "../inbound/inbox-rows.js";
import { createMemoryLogger } from "../logger.js";
import { openLocalState } from "../state/local-state.js";

/** The set-aside inbox entries, read from `<home>/state/inbox.json` (and the journal) without writing. */
export async function readSetAside(paths: SwitchboardPaths): Promise<SetAsideView[]> {
  const dir = path.join(paths.home, "state");
  const logger = createMemoryLogger();
  const state = openLocalState({ dir, logger, readOnly: true });
  const inbox = await createInbox({ state, path: path.join(dir, "inbox.json"), logger });
  return inbox.listSetAside().map(describeSetAside);
}
