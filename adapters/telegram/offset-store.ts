import { readFile, rename } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { type Logger, fileStamp, writeFileAtomic } from "../../src/index.js";

const OffsetFileSchema = z.object({
  version: z.literal(1),
  /** update ids count per bot: a new token for another bot starts over */
  botId: z.number().int(),
  /** the highest update id handled; polling resumes after it */
  lastUpdateId: z.number().int(),
});

/** Where polling resumes after a restart: one small file per account. */
export interface OffsetStore {
  /** The last update id handled by bot `botId`; undefined on the first start, for another bot, or for an unreadable file. */
  read(botId: number): Promise<number | undefined>;
  /** Records `lastUpdateId` as handled (atomic write). */
  write(botId: number, lastUpdateId: number): Promise<void>;
}

/** `$SWITCHBOARD_HOME/channels/telegram/<accountId>/offset.json`. */
export function offsetFilePath(home: string, accountId: string): string {
  return path.join(home, "channels", "telegram", accountId, "offset.json");
}

/**
 * The per-account update offset, written after each update so a restart never hands an update to
 * the core twice. A file that does not parse is moved aside as `offset.json.corrupt-<time>` and
 * reported; polling then starts from what Telegram still holds (the core's dedupe catches repeats).
 */
export function createOffsetStore(file: string, deps: { logger: Logger; now?: () => number }): OffsetStore {
  const now = deps.now ?? Date.now;
  return {
    async read(botId) {
      let text: string;
      try {
        text = await readFile(file, "utf8");
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
        throw err;
      }
      let parsed: z.infer<typeof OffsetFileSchema>;
      try {
        parsed = OffsetFileSchema.parse(JSON.parse(text));
      } catch (err) {
        const movedTo = `${file}.corrupt-${fileStamp(now())}`;
        await rename(file, movedTo);
        deps.logger.error({ file, movedTo, err }, "telegram offset file is corrupt; moved aside");
        return undefined;
      }
      if (parsed.botId !== botId) {
        deps.logger.info(
          { file, storedBotId: parsed.botId, botId },
          "telegram offset belongs to another bot; starting fresh",
        );
        return undefined;
      }
      return parsed.lastUpdateId;
    },
    async write(botId, lastUpdateId) {
      await writeFileAtomic(file, `${JSON.stringify({ version: 1, botId, lastUpdateId })}\n`);
    },
  };
}
