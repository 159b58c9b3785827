/**
 * The operator's log: one small logger for every package and the cli, with
 * levels and two formats, writing one line per event on stderr (never
 * stdout, which carries the protocol on stdio). Its events are what an
 * operator needs (listening, sessions opened, closed, expired and restored,
 * store failures, refusals with their reason), each logged once, and never
 * carry a token, a `requestState` or a tool's arguments. Not to be confused
 * with `frame.log`, which sends MCP log notifications to the client.
 *
 * @module
 */

/**
 * A level of the operator's log; `"silent"` logs nothing.
 *
 * @example
 * ```ts
 * import type { OperatorLogLevel } from "@anubis/core";
 * import assert from "node:assert/strict";
 * const level: OperatorLogLevel = "warn";
 * assert.equal(level, "warn");
 * ```
 */
export type OperatorLogLevel = "debug" | "info" | "warn" | "error" | "silent";

/**
 * How a log line looks: `"pretty"` (`anubis: <message>`, the default) or
 * `"json"` (one JSON object per line: `time`, `level`, `event`, `msg`, and the
 * event's fields).
 *
 * @example
 * ```ts
 * import type { LogFormat } from "@anubis/core";
 * import assert from "node:assert/strict";
 * const format: LogFormat = "json";
 * assert.equal(format, "json");
 * ```
 */
export type LogFormat = "json" | "pretty";

/**
 * Options of {@link configureLogger}.
 *
 * @example
 * ```ts
 * import type { LoggerOptions } from "@anubis/core";
 * import assert from "node:assert/strict";
 * const options: LoggerOptions = { level: "info", format: "json" };
 * assert.equal(options.format, "json");
 * ```
 */
export interface LoggerOptions {
  /** The least level written (default `"warn"`: a library is quiet unless something fails). */
  level?: OperatorLogLevel;
  /** The line format (default `"pretty"`). */
  format?: LogFormat;
  /** Where a line goes (default: `console.error`, which is stderr). */
  write?: (line: string) => void;
}

const RANK: Readonly<Record<OperatorLogLevel, number>> = {
  debug: 10,
  info: 20,
  warn: 30,
  error: 40,
  silent: 100,
};

/**
 * The operator's logger (see {@link logger}).
 *
 * @example
 * ```ts
 * import type { Logger } from "@anubis/core";
 * import assert from "node:assert/strict";
 * const opened = (log: Logger, id: string) => log.info("session.opened", `session ${id} opened`, { sessionId: id });
 * assert.equal(typeof opened, "function");
 * ```
 */
export interface Logger {
  /** Whether `level` is written (to skip building an expensive event). */
  enabled(level: Exclude<OperatorLogLevel, "silent">): boolean;
  /**
   * A detail for debugging. Each method takes the event's name, its message
   * and its fields: identifiers and reasons, never secrets (an `error` field
   * is written as its message in JSON, with its stack in pretty lines).
   */
  debug(event: string, message: string, fields?: Readonly<Record<string, unknown>>): void;
  /** A normal event of the server's life (listening, a session opened). */
  info(event: string, message: string, fields?: Readonly<Record<string, unknown>>): void;
  /** Something the operator may need to act on (a refusal, a degraded store). */
  warn(event: string, message: string, fields?: Readonly<Record<string, unknown>>): void;
  /** A failure (a store that failed, a defect). */
  error(event: string, message: string, fields?: Readonly<Record<string, unknown>>): void;
}

let threshold = RANK.warn;
let format: LogFormat = "pretty";
let write: (line: string) => void = (line) => console.error(line);

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function emit(
  level: Exclude<OperatorLogLevel, "silent">,
  event: string,
  message: string,
  fields?: Readonly<Record<string, unknown>>,
) {
  if (RANK[level] < threshold) return;
  const error = fields?.error;
  if (format === "pretty") {
    const detail = error === undefined
      ? ""
      : `: ${error instanceof Error ? error.stack ?? error.message : String(error)}`;
    write(`anubis: ${message}${detail}`);
    return;
  }
  const record: Record<string, unknown> = {
    time: new Date().toISOString(),
    level,
    event,
    msg: message,
    ...fields,
  };
  if (error !== undefined) record.error = errorText(error);
  let line: string;
  try {
    line = JSON.stringify(record);
  } catch {
    line = JSON.stringify({ time: record.time, level, event, msg: message });
  }
  write(line);
}

/**
 * The operator's logger every package writes to; {@link configureLogger}
 * sets its level and format (the cli does, from `--log-level` and
 * `--log-format`).
 *
 * @example
 * ```ts
 * import { configureLogger, logger } from "@anubis/core";
 * import assert from "node:assert/strict";
 * const lines: string[] = [];
 * configureLogger({ level: "info", format: "json", write: (line) => lines.push(line) });
 * logger.info("session.opened", "session 3f2a opened", { sessionId: "3f2a", transport: "http" });
 * logger.debug("detail", "not written at info");
 * const record = JSON.parse(lines[0]);
 * assert.equal(lines.length, 1);
 * assert.equal(record.level, "info");
 * assert.equal(record.event, "session.opened");
 * assert.equal(record.sessionId, "3f2a");
 * configureLogger({ format: "pretty", write: (line) => lines.push(line) });
 * logger.error("store.failed", "session store failed saving 3f2a", { error: new Error("disk full") });
 * assert.match(lines[1], /^anubis: session store failed saving 3f2a: Error: disk full/);
 * configureLogger({}); // back to the defaults: warn, pretty, stderr
 * ```
 */
export const logger: Logger = {
  enabled: (level) => RANK[level] >= threshold,
  debug: (event, message, fields) => emit("debug", event, message, fields),
  info: (event, message, fields) => emit("info", event, message, fields),
  warn: (event, message, fields) => emit("warn", event, message, fields),
  error: (event, message, fields) => emit("error", event, message, fields),
};

/**
 * Sets the level, format and destination of {@link logger}; an option left
 * out goes back to its default.
 *
 * @param options The level, format and writer.
 *
 * @example
 * ```ts
 * import { configureLogger, logger } from "@anubis/core";
 * import assert from "node:assert/strict";
 * configureLogger({ level: "error" });
 * assert.equal(logger.enabled("warn"), false);
 * assert.equal(logger.enabled("error"), true);
 * configureLogger({});
 * assert.equal(logger.enabled("warn"), true);
 * ```
 */
export function configureLogger(options: LoggerOptions): void {
  threshold = RANK[options.level ?? "warn"];
  format = options.format ?? "pretty";
  write = options.write ?? ((line) => console.error(line));
}
