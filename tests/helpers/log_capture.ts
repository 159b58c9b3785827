/**
 * The operator's log captured in a test: `logger` writes JSON lines to a
 * list instead of stderr until the capture is restored.
 */

import { configureLogger } from "@anubis/core";

/** A captured log: its records, parsed, and the raw lines. */
export interface LogCapture {
  /** Every line written so far, parsed. */
  records(): Record<string, unknown>[];
  /** Every line written so far, as written. */
  lines: string[];
  /** Back to the default logger (warn, pretty, stderr). */
  restore(): void;
}

/** Captures `logger` at `debug`, in JSON, until `restore()`. */
export function captureLog(): LogCapture {
  const lines: string[] = [];
  configureLogger({ level: "debug", format: "json", write: (line) => lines.push(line) });
  return {
    lines,
    records: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>),
    restore: () => configureLogger({}),
  };
}
