import type { TranscriptMessage } from "../sessions/transcripts/transcript-event.js";
import type { Transcripts } from "../sessions/transcripts/transcripts-port.js";
import type { Workspace } from "../workspace/workspace-port.js";
import { rawTableSpec } from "./home-tables.js";
import type { MigrationSide } from "./migration-side.js";

/** What a side holds, by line of the count check: `table <name>`, `transcripts <agent>`, `messages <agent>`, `archives <agent>`, `archived messages <agent>`, `workspace <agent>`. */
export type SideCounts = Record<string, number>;

const PAGE = 1_000;

/** Every message of transcript `id`, oldest first, tool calls and results included. */
export async function readWholeTranscript(transcripts: Transcripts, id: string): Promise<TranscriptMessage[]> {
  const pages: TranscriptMessage[][] = [];
  let cursor: string | undefined;
  do {
    const page = await transcripts.readTail(id, { limit: PAGE, includeTools: true, ...(cursor && { cursor }) });
    pages.unshift(page.messages);
    cursor = page.hasMore ? page.cursor : undefined;
  } while (cursor !== undefined);
  return pages.flat();
}

/** The live transcripts of an agent (archives of reset sessions are not moved: docs/storage.md). */
export async function liveTranscripts(transcripts: Transcripts): Promise<string[]> {
  const listed = await transcripts.list();
  return listed.filter((t) => t.archivedAt === undefined).map((t) => t.id);
}

/** The archived transcripts of an agent (of reset sessions): their names, oldest archive first, and when each was archived. */
export async function archivedTranscripts(
  transcripts: Transcripts,
): Promise<Array<{ name: string; archivedAt: number }>> {
  const listed = await transcripts.list();
  return listed
    .flatMap((t) => (t.archivedAt === undefined ? [] : [{ name: t.id, archivedAt: t.archivedAt }]))
    .sort((a, b) => a.archivedAt - b.archivedAt || a.name.localeCompare(b.name));
}

/** Every file of a workspace, by path relative to it. */
export async function workspaceFiles(workspace: Workspace, folder = "."): Promise<string[]> {
  const files: string[] = [];
  for (const entry of await workspace.list(folder)) {
    const file = folder === "." ? entry.name : `${folder}/${entry.name}`;
    if (entry.type === "file") files.push(file);
    else files.push(...(await workspaceFiles(workspace, file)));
  }
  return files;
}

/** Rows of state table `name` on `side` (valid or not). */
async function tableRows(side: MigrationSide, name: string): Promise<number> {
  const table = await side.state.table(rawTableSpec(name, side.tablePath(name)));
  const rows = table.size;
  await table.close();
  return rows;
}

/** What `side` holds of `tables` and of `agents`' transcripts and workspaces; lines with nothing are left out. */
export async function countSide(side: MigrationSide, tables: string[], agents: string[]): Promise<SideCounts> {
  const counts: SideCounts = {};
  const note = (line: string, n: number) => {
    if (n > 0) counts[line] = n;
  };
  for (const name of tables) note(`table ${name}`, await tableRows(side, name));
  for (const agentId of agents) {
    const transcripts = side.transcripts(agentId);
    const ids = await liveTranscripts(transcripts);
    note(`transcripts ${agentId}`, ids.length);
    let messages = 0;
    for (const id of ids) messages += (await readWholeTranscript(transcripts, id)).length;
    note(`messages ${agentId}`, messages);
    const archives = await archivedTranscripts(transcripts);
    note(`archives ${agentId}`, archives.length);
    let archived = 0;
    for (const { name } of archives) archived += (await readWholeTranscript(transcripts, name)).length;
    note(`archived messages ${agentId}`, archived);
    note(`workspace ${agentId}`, (await workspaceFiles(side.workspace(agentId))).length);
  }
  return counts;
}
