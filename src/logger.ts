import { createRequire } from "node:module";
import type { pino } from "pino";

type LogFn = (fields: Record<string, unknown>, message: string) => void;

/** The structured logger every factory takes in its deps (pino-compatible: fields first, then message). */
export interface Logger {
  debug: LogFn;
  info: LogFn;
  warn: LogFn;
  error: LogFn;
}

// pino and pino-pretty are required when the first real logger is made: the CLI's read-only commands
// (`--help`, `status`, `sessions`) use the memory logger and start without them.
const require = createRequire(import.meta.url);

/**
 * A pino logger writing JSON lines to stderr (stdout stays free for CLI output), or to `destination`.
 * Pass errors as the `err` field: its serializer keeps the type, message, stack, `code` and `cause`.
 */
export function createLogger(level = "info", destination?: pino.DestinationStream): Logger {
  const { pino: createPino } = require("pino") as typeof import("pino");
  return createPino({ level, base: undefined }, destination ?? createPino.destination(2));
}

/**
 * A destination that writes each log line for a person (pino-pretty: time, level, message, then the
 * fields), synchronously, so a line is on the terminal before the next banner line or the exit.
 */
export function prettyDestination(stream: { write(text: string): unknown }, colorize: boolean): pino.DestinationStream {
  const { prettyFactory } = require("pino-pretty") as typeof import("pino-pretty");
  const pretty = prettyFactory({ colorize, translateTime: "SYS:HH:MM:ss", ignore: "pid,hostname" });
  return { write: (line: string) => void stream.write(pretty(line)) };
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
