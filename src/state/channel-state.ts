/**
 * The channel state: durable state a channel adapter keeps for itself (Telegram's update offset,
 * WhatsApp's linked-device credentials and signal keys), on whatever backend the gateway's state is.
 * Every channel's rows live in one table of the state port, `channels`, keyed
 * `<channel>/<namespace>/<key>`: on `local` that is `state/channels.json` and its journal, on
 * `postgres` rows of `state_rows`. An adapter gets its channel's view in its start context, so a new
 * channel needs nothing in the core, and `state migrate` carries the table like any other.
 */
import type { StatePort, StateTable, TableSpec } from "./state-port.js";

/** The state port's table holding every channel's rows. */
const CHANNELS_TABLE = "channels";

/** One stored row: the adapter's JSON value and when it was written (ms). */
interface ChannelRow {
  value: unknown;
  savedAt: number;
}

/** The rows of one namespace of a channel (one account): JSON values by key. */
export interface ChannelRows {
  /** The value under `key`, or undefined. */
  get(key: string): unknown;
  /** When the value under `key` was last written (ms), or undefined. */
  savedAt(key: string): number | undefined;
  /** The keys that hold a value, in the order they were first written. */
  keys(): string[];
  /**
   * Stores every change (`null` or `undefined` removes the key) as one commit: after a crash or a
   * refused write, all of them are stored or none. Settles once they are durable.
   */
  write(changes: Readonly<Record<string, unknown>>): Promise<void>;
}

/** One channel's state: its namespaces (usually one per account). */
export interface ChannelState {
  /** true for a reader in another process: `write` throws */
  readonly readOnly: boolean;
  /** The rows of `namespace` (an account id, or any name without "/"). */
  rows(namespace: string): ChannelRows;
}

/** The channel states of one state port, over its one `channels` table. */
export interface ChannelStates {
  /** The state of channel `channelId`. */
  forChannel(channelId: string): ChannelState;
  /** Closes the table (close the adapters first). */
  close(): Promise<void>;
}

/** The spec of the `channels` table; `file` is where the local backend keeps it. */
function channelsTableSpec(file: string): TableSpec<ChannelRow> {
  return {
    name: CHANNELS_TABLE,
    path: file,
    what: "channel state",
    invalidRows: "keep",
    check: (_key, row) =>
      typeof row === "object" && row !== null && "value" in row && typeof (row as ChannelRow).savedAt === "number"
        ? { value: row as ChannelRow }
        : { error: "not a channel state row ({ value, savedAt })" },
  };
}

/** The prefix of a namespace's keys; "/" would make two namespaces overlap, so it is escaped. */
const prefixOf = (channelId: string, namespace: string) =>
  `${encodeURIComponent(channelId)}/${encodeURIComponent(namespace)}/`;

function namespaceRows(
  state: StatePort,
  table: StateTable<ChannelRow>,
  prefix: string,
  now: () => number,
): ChannelRows {
  return {
    get: (key) => table.get(prefix + key)?.value,
    savedAt: (key) => table.get(prefix + key)?.savedAt,
    keys: () => [...table.keys()].filter((k) => k.startsWith(prefix)).map((k) => k.slice(prefix.length)),
    write(changes) {
      const savedAt = now();
      const written: Promise<void>[] = [];
      const committed = state.commit(() => {
        for (const [key, value] of Object.entries(changes))
          written.push(
            value === null || value === undefined
              ? table.delete(prefix + key)
              : table.set(prefix + key, { value: JSON.parse(JSON.stringify(value)) as unknown, savedAt }),
          );
      });
      return Promise.all([committed, ...written]).then(() => undefined);
    },
  };
}

/** Opens the `channels` table of `state` (loaded whole, as every table of the port). */
export async function openChannelStates(
  state: StatePort,
  options: { file: string; now?: () => number },
): Promise<ChannelStates> {
  const table = await state.table(channelsTableSpec(options.file));
  const now = options.now ?? Date.now;
  return {
    forChannel: (channelId) => ({
      readOnly: state.readOnly,
      rows: (namespace) => namespaceRows(state, table, prefixOf(channelId, namespace), now),
    }),
    close: () => table.close(),
  };
}
