import { pino } from "pino";

type LogFn = (fields: Record<string, unknown>, message: string) => void;

/** The structured logger every factory takes in its deps (pino-compatible: fields first, then message). */
export interface Logger {
  debug: LogFn;
  info: LogFn;
  warn: LogFn;
  error: LogFn;
}

/**
 * A pino logger writing JSON lines to stderr (stdout stays free for CLI output), or to `destination`.
 * Pass errors as the `err` field: its serializer keeps the type, message, stack, `code` and `cause`.
 */
export function createLogger(level = "info", destination: pino.DestinationStream = pino.destination(2)): Logger {
  return pino({ level, base: undefined }, destination);
}

/** A log line kept by {@link createMemoryLogger}. */
export interface LogRecord {
  level: "debug" | "info" | "warn" | "error";
  fields: Record<string, unknown>;
  message: string;
}

/** A logger that keeps every line in memory, for tests and for `status` summaries. */
export function createMemoryLogger(): Logger & { records: LogRecord[] } {
  const records: LogRecord[] = [];
  const at =
    (level: LogRecord["level"]): LogFn =>
    (fields, message) =>
      void records.push({ level, fields, message });
  return { records, debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") };
}
