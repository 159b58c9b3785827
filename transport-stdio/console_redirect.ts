/**
 * Sends every console method that writes to stdout to stderr instead, so a
 * server's prints cannot corrupt the protocol stream on stdout.
 *
 * @module
 */

// Printed with console.error's own formatting and group indentation
// (console.group prints its label through console.log).
const AS_ERROR = ["log", "info", "debug"] as const;
// Methods that print to stdout without going through console.log (on Deno),
// with the state they share (counters, timers): served by a node:console
// Console writing to stderr, made on first use.
const ON_STDERR_CONSOLE = [
  "dir",
  "dirxml",
  "table",
  "count",
  "countReset",
  "time",
  "timeLog",
  "timeEnd",
  "clear",
] as const;

type Method = (...args: unknown[]) => void;
type NodeProcess = {
  stderr: unknown;
  getBuiltinModule?: (id: string) => unknown;
};

/**
 * Redirects `console.log`, `info`, `debug`, `dir`, `dirxml`, `table`,
 * `count`, `countReset`, `time`, `timeLog`, `timeEnd` and `clear` (and so
 * `group`/`groupCollapsed`, which print through `log`) to stderr; `error`,
 * `warn`, `trace` and `assert` already print there. Install it before
 * importing a server module that may print while it loads.
 *
 * @returns A function that restores the console as it was.
 *
 * @example
 * ```ts
 * import { redirectConsole } from "@anubis/transport-stdio";
 * import assert from "node:assert/strict";
 * const original = console.log;
 * const restore = redirectConsole();
 * assert.notEqual(console.log, original); // console.log("…") now prints on stderr
 * restore();
 * assert.equal(console.log, original);
 * ```
 */
export function redirectConsole(): () => void {
  const target = console as unknown as Record<string, Method>;
  const saved: [string, Method][] = [];
  const replace = (name: string, method: Method) => {
    saved.push([name, target[name]]);
    target[name] = method;
  };
  const error = target.error;
  for (const name of AS_ERROR) replace(name, error);
  let stderrConsole: Record<string, Method> | undefined;
  for (const name of ON_STDERR_CONSOLE) {
    replace(name, (...args) => {
      stderrConsole ??= createStderrConsole(error);
      stderrConsole[name](...args);
    });
  }
  return () => {
    for (const [name, method] of saved) target[name] = method;
  };
}

/** A node:console Console on stderr; console.error's behaviour where none exists. */
function createStderrConsole(error: Method): Record<string, Method> {
  const process = (globalThis as { process?: NodeProcess }).process;
  const nodeConsole = process?.getBuiltinModule?.("node:console") as
    | { Console: new (options: { stdout: unknown; stderr: unknown }) => object }
    | undefined;
  if (nodeConsole) {
    const stderr = process!.stderr;
    const instance = new nodeConsole.Console({ stdout: stderr, stderr }) as Record<string, Method>;
    return Object.fromEntries(
      ON_STDERR_CONSOLE.map((name) => [name, instance[name].bind(instance)]),
    );
  }
  return Object.fromEntries(ON_STDERR_CONSOLE.map((name) => [name, error]));
}
