import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { DeliveryError as DeliveryErrorFromContract } from "../src/delivery/channel-adapter.js";
import {
  ConfigError,
  DeliveryError,
  ERROR_CATALOGUE,
  GatewayError,
  InternalError,
  SwitchboardError,
  ToolArgumentError,
  apology,
  chatErrorText,
  logError,
  resultError,
} from "../src/errors.js";
import { createLogger, createMemoryLogger } from "../src/logger.js";
import { CronRequestError } from "../src/cron/cron-request-error.js";
import { CommandUsageError } from "../src/commands/command-grammar.js";
import { InboxWriteError } from "../src/inbound/inbox.js";
import { CorruptFileError } from "../src/state/atomic-json-file.js";

/** A real pino logger whose JSON lines land in `lines`. */
function capturedLogger() {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split("\n").filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { logger: createLogger("debug", sink), lines };
}

describe("the error family", () => {
  it("gives every subclass a catalogue code, its default message, a fix and a cause", () => {
    const cause = new Error("EACCES");
    const config = new ConfigError("CONFIG_UNREADABLE", "cannot read /x/switchboard.json5", { cause });
    expect(config).toBeInstanceOf(SwitchboardError);
    expect(config).toMatchObject({ code: "CONFIG_UNREADABLE", name: "ConfigError", cause });
    expect(config.fix).toBe(ERROR_CATALOGUE.CONFIG_UNREADABLE.fix);
    expect(new SwitchboardError("NOT_FOUND").message).toBe(ERROR_CATALOGUE.NOT_FOUND.message);
    expect(new ToolArgumentError("limit must be a number").code).toBe("INVALID_ARGUMENT");
    expect(new InternalError("lane missing").code).toBe("INTERNAL");
    expect(new GatewayError("NOT_FOUND", "No session found: x").code).toBe("NOT_FOUND");
  });

  it("makes a cron scheduler refusal a catalogue error that keeps its message at the chat and result edges", () => {
    const busy = new CronRequestError("BUSY", 'cron job "j1" is running (run r1); try again when it ends');
    expect(busy).toBeInstanceOf(SwitchboardError);
    expect(busy.fix).toBe(ERROR_CATALOGUE.BUSY.fix);
    const logger = createMemoryLogger();
    expect(chatErrorText(busy, logger, "cron run refused")).toBe(busy.message);
    expect(resultError(busy, logger, "cron run refused")).toEqual({
      code: "INVALID_REQUEST",
      message: busy.message,
      status: 409,
    });
  });

  it("puts inbox, state-file and command-usage errors in the family, and a chat still gets an apology for a failed store", () => {
    const stored = new InboxWriteError(new Error("ENOSPC: no space left on device, write"));
    const corrupt = new CorruptFileError("/home/u/.switchboard/state/outbox.json", "Unexpected token");
    const usage = new CommandUsageError("send", 'Unknown mode "maybe".');
    expect([stored, corrupt, usage].every((err) => err instanceof SwitchboardError)).toBe(true);
    expect([stored.code, corrupt.code, usage.code]).toEqual(["STORAGE_FAILED", "STATE_CORRUPT", "INVALID_ARGUMENT"]);
    expect(stored).toBeInstanceOf(InboxWriteError);
    const logger = createMemoryLogger();
    expect(chatErrorText(stored, logger, "inbound store failed")).toMatch(/^Sorry, something went wrong on my side/);
    expect(chatErrorText(corrupt, logger, "state file corrupt")).not.toContain("/home/u");
  });

  it("keeps DeliveryError's name and fields for adapters, from the adapter contract too", () => {
    const err = new DeliveryErrorFromContract("Telegram rate limit", {
      retryable: true,
      reason: "rate_limited",
      retryAfterMs: 3000,
    });
    expect(err).toBeInstanceOf(DeliveryError);
    expect(err).toBeInstanceOf(SwitchboardError);
    expect(err).toMatchObject({
      name: "DeliveryError",
      code: "DELIVERY_FAILED",
      retryable: true,
      reason: "rate_limited",
      retryAfterMs: 3000,
    });
  });
});

describe("the chat edge", () => {
  it("says a known error's own message and logs it at its catalogue level", () => {
    const logger = createMemoryLogger();
    const err = new SwitchboardError("INVALID_ARGUMENT", 'Unknown model "gpt-9". Valid models: offline/echo.');
    expect(chatErrorText(err, logger, "command failed", { command: "/model" })).toBe(err.message);
    expect(logger.records).toEqual([
      { level: "info", message: "command failed", fields: { command: "/model", err, code: "INVALID_ARGUMENT" } },
    ]);
  });

  it("never shows a bug's message: an apology with an error id, and the log has the same id with the error", () => {
    const logger = createMemoryLogger();
    const bug = new TypeError("Cannot read properties of undefined (reading 'token')");
    const text = chatErrorText(bug, logger, "command failed");
    const errorId = /error id ([0-9a-f]{8})/.exec(text)?.[1];
    expect(text).toBe(apology(errorId!));
    expect(text).not.toContain("token");
    expect(logger.records).toEqual([
      { level: "error", message: "command failed", fields: { err: bug, code: "INTERNAL", errorId } },
    ]);
  });

  it("apologizes for an InternalError too, though it belongs to the family", () => {
    const text = chatErrorText(new InternalError("a run without a lane"), createMemoryLogger(), "turn failed");
    expect(text).toMatch(/^Sorry, .*\(error id [0-9a-f]{8}\)\.$/);
  });

  it("gives two failures two different error ids", () => {
    const logger = createMemoryLogger();
    expect(chatErrorText(new Error("a"), logger, "x")).not.toBe(chatErrorText(new Error("a"), logger, "x"));
  });
});

describe("the result edge", () => {
  it("keeps a method error's structured code and message, with its HTTP status", () => {
    const logger = createMemoryLogger();
    expect(resultError(new GatewayError("NOT_FOUND", "No session found: x"), logger, "m")).toEqual({
      code: "NOT_FOUND",
      message: "No session found: x",
      status: 404,
    });
    expect(resultError(new SwitchboardError("INVALID_SESSION_KEY", '"x" is not a session key'), logger, "m")).toEqual({
      code: "INVALID_REQUEST",
      message: '"x" is not a session key',
      status: 400,
    });
    expect(logger.records).toEqual([]); // a refused request is an answer, not an incident
  });

  it("turns anything else into INTERNAL with an error id, and logs the whole error under it", () => {
    const logger = createMemoryLogger();
    const bug = new RangeError("Invalid array length");
    const result = resultError(bug, logger, "gateway method failed", { method: "sessions.list" });
    expect(result).toMatchObject({ code: "INTERNAL", status: 500, message: expect.stringContaining(result.errorId!) });
    expect(result.message).not.toContain("array");
    expect(logger.records[0]).toMatchObject({
      level: "error",
      fields: { method: "sessions.list", err: bug, errorId: result.errorId },
    });
  });
});

describe("the log edge", () => {
  it("keeps the stack and the cause of a logged error in the JSON line", () => {
    const { logger, lines } = capturedLogger();
    const cause = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:443"), { code: "ECONNREFUSED" });
    const err = new DeliveryError("Telegram unreachable", { retryable: true, reason: "network", cause });
    logError(logger, err, "send failed", { chatId: "42" });
    expect(lines).toHaveLength(1);
    const line = lines[0] as { level: number; msg: string; chatId: string; code: string; err: Record<string, unknown> };
    expect(line).toMatchObject({ level: 40, msg: "send failed", chatId: "42", code: "DELIVERY_FAILED" });
    expect(line.err).toMatchObject({ type: "DeliveryError", message: expect.stringContaining("Telegram unreachable") });
    expect(line.err.stack).toEqual(expect.stringContaining("errors.test.ts"));
    // pino's err serializer appends the cause's own stack ("caused by: ...") and its message.
    expect(line.err.stack).toEqual(expect.stringContaining("caused by: Error: connect ECONNREFUSED 127.0.0.1:443"));
    expect(line.err.message).toBe("Telegram unreachable: connect ECONNREFUSED 127.0.0.1:443");
  });

  it("logs an unexpected error at error level with its error id", () => {
    const { logger, lines } = capturedLogger();
    logError(logger, new Error("boom"), "tick failed", {}, "0badc0de");
    expect(lines[0]).toMatchObject({
      level: 50,
      errorId: "0badc0de",
      err: { message: "boom", stack: expect.any(String) },
    });
  });
});
