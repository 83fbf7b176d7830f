import { readFile, rename } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { type ChannelRows, type Logger, fileStamp } from "../../src/index.js";

const OffsetSchema = z.object({
  version: z.literal(1),
  /** update ids count per bot: a new token for another bot starts over */
  botId: z.number().int(),
  /** the highest update id handled; polling resumes after it */
  lastUpdateId: z.number().int(),
});

/** Where polling resumes after a restart: one row per account in the channel state. */
export interface OffsetStore {
  /** The last update id handled by bot `botId`; undefined on the first start, for another bot, or for an unreadable row. */
  read(botId: number): Promise<number | undefined>;
  /** Records `lastUpdateId` as handled; settles once it is durable. */
  write(botId: number, lastUpdateId: number): Promise<void>;
}

/** An earlier version's offset file, `$SWITCHBOARD_HOME/channels/telegram/<accountId>/offset.json`. */
export function offsetFilePath(home: string, accountId: string): string {
  return path.join(home, "channels", "telegram", accountId, "offset.json");
}

const KEY = "offset";

/** The JSON in `text`, or undefined when it is not JSON. */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * An earlier version's offset file becomes the account's row when it has none, and is renamed
 * `offset.json.imported`; a file that does not parse is moved aside as `offset.json.corrupt-<time>`.
 */
async function importOffsetFile(rows: ChannelRows, file: string, deps: { logger: Logger; now: () => number }) {
  if (rows.get(KEY) !== undefined) return;
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
    throw err;
  }
  const parsed = OffsetSchema.safeParse(parseJson(text));
  if (!parsed.success) {
    const movedTo = `${file}.corrupt-${fileStamp(deps.now())}`;
    await rename(file, movedTo);
    deps.logger.error({ file, movedTo }, "telegram offset file is corrupt; moved aside");
    return;
  }
  await rows.write({ [KEY]: parsed.data });
  await rename(file, `${file}.imported`);
  deps.logger.info({ file, lastUpdateId: parsed.data.lastUpdateId }, "telegram offset file imported");
}

/**
 * The per-account update offset, a row of the channel state (so it lives where the gateway's state
 * does: `state/` on local, PostgreSQL rows on postgres), written after each batch so a restart
 * never hands an update to the core twice. A row that does not parse is reported and polling
 * starts from what Telegram still holds (the core's dedupe catches repeats).
 */
export async function openOffsetStore(
  rows: ChannelRows,
  deps: { logger: Logger; legacyFile: string; readOnly: boolean; now?: () => number },
): Promise<OffsetStore> {
  const { logger } = deps;
  if (!deps.readOnly) await importOffsetFile(rows, deps.legacyFile, { logger, now: deps.now ?? Date.now });
  return {
    async read(botId) {
      const stored = rows.get(KEY);
      if (stored === undefined) return undefined;
      const parsed = OffsetSchema.safeParse(stored);
      if (!parsed.success) {
        logger.error({ row: stored }, "telegram offset row is not readable; polling from what Telegram holds");
        return undefined;
      }
      if (parsed.data.botId !== botId) {
        logger.info(
          { storedBotId: parsed.data.botId, botId },
          "telegram offset belongs to another bot; starting fresh",
        );
        return undefined;
      }
      return parsed.data.lastUpdateId;
    },
    write: (botId, lastUpdateId) => rows.write({ [KEY]: { version: 1, botId, lastUpdateId } }),
  };
}
