/**
 * Watching a KV file while it is served: a file removed or replaced (the
 * process keeps writing to a file nobody else opens, and instances started
 * now start a new database: a silent split) or made read-only (instances
 * started now can only read it) is reported, and stores refuse to work on it.
 *
 * @module
 */

import { logger } from "../logger.ts";

/**
 * The error a KV store throws while its file is unusable
 * ({@link KvFileWatch.problem}): the reason, for the operator and the client.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { KvUnavailableError } from "@anubis/core/kv";
 * const error = new KvUnavailableError("the KV file a.kv was removed");
 * assert.equal(error.name, "KvUnavailableError");
 * assert.match(error.message, /removed/);
 * ```
 */
export class KvUnavailableError extends Error {
  /**
   * Makes the error for a problem with the file.
   *
   * @param problem What is wrong with the file.
   */
  constructor(problem: string) {
    super(`KV store unavailable: ${problem}`);
    this.name = "KvUnavailableError";
  }
}

/** The identity of a file: what stays the same while it is the same file. */
interface FileIdentity {
  dev: number;
  ino: number | null;
}

/**
 * What is wrong with a KV file for a writer, or `undefined`: gone, another
 * file than `opened`, or read-only (no write permission bit, or opening it
 * for writing is refused).
 *
 * @param path The file.
 * @param opened The file's identity when it was opened, if known.
 * @returns The problem, in words, or `undefined`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { kvFileProblem } from "./kv_file_watch.ts";
 * const path = await Deno.makeTempFile();
 * assert.equal(await kvFileProblem(path), undefined);
 * await Deno.chmod(path, 0o444);
 * assert.match((await kvFileProblem(path))!, /read-only/);
 * await Deno.remove(path);
 * assert.match((await kvFileProblem(path))!, /does not exist/);
 * ```
 */
export async function kvFileProblem(
  path: string,
  opened?: { dev: number; ino: number },
): Promise<string | undefined> {
  return (await inspect(path, opened))?.problem;
}

/** {@link kvFileProblem}, saying whether the file open here is lost for good (removed, replaced). */
async function inspect(
  path: string,
  opened?: FileIdentity,
): Promise<{ problem: string; lost: boolean } | undefined> {
  let info;
  try {
    info = await Deno.stat(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) {
      const problem = `the KV file ${path} does not exist` +
        (opened ? " any more (removed while serving)" : "");
      return { problem, lost: opened !== undefined };
    }
    return {
      problem: `the KV file ${path} cannot be read (${(error as Error).message})`,
      lost: false,
    };
  }
  if (opened && (info.dev !== opened.dev || info.ino !== opened.ino)) {
    return {
      problem: `the KV file ${path} was replaced by another file while serving`,
      lost: true,
    };
  }
  if (info.mode !== null && (info.mode & 0o222) === 0) {
    const mode = (info.mode & 0o777).toString(8);
    return { problem: `the KV file ${path} is read-only (mode ${mode})`, lost: false };
  }
  try {
    (await Deno.open(path, { read: true, write: true })).close();
  } catch (error) {
    return {
      problem: `the KV file ${path} is read-only (${(error as Error).message})`,
      lost: false,
    };
  }
  return undefined;
}

/**
 * Options of a {@link KvFileWatch}.
 *
 * @example
 * ```ts
 * import type { KvFileWatchOptions } from "@anubis/core/kv";
 * const options: KvFileWatchOptions = { intervalMs: 1000 };
 * ```
 */
export interface KvFileWatchOptions {
  /** How often the file is checked, in ms (default 2,000). */
  intervalMs?: number;
}

/**
 * Checks a KV file now and then (one unref'd timer) and keeps what is wrong
 * with it: removed or replaced since it was opened, or read-only. A change is
 * logged once through `logger` (`kv.unavailable`, an error, with the path
 * and the problem; `kv.recovered` when a read-only file is writable again).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { KvFileWatch } from "@anubis/core/kv";
 * const path = await Deno.makeTempFile();
 * const watch = await KvFileWatch.start(path);
 * assert.equal(watch.problem, undefined);
 * await Deno.remove(path);
 * assert.match((await watch.check())!, /removed while serving/);
 * assert.match(watch.problem!, /removed while serving/);
 * watch.close();
 * ```
 */
export class KvFileWatch {
  readonly #path: string;
  readonly #opened: FileIdentity | undefined;
  #problem: string | undefined;
  #timer: ReturnType<typeof setInterval> | undefined;
  #checking = false;
  /** Removed or replaced: the database open here is not the one at the path, for good. */
  #lost = false;

  private constructor(path: string, opened: FileIdentity | undefined, problem?: string) {
    this.#path = path;
    this.#opened = opened;
    this.#problem = problem;
  }

  /**
   * Starts watching the file as it is now (call it once the database is
   * open). A problem found now is kept, not logged: the caller reports it.
   *
   * @param path The KV file.
   * @param options The check interval.
   * @returns The watch.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { KvFileWatch } from "@anubis/core/kv";
   * const path = await Deno.makeTempFile();
   * await Deno.chmod(path, 0o444);
   * const watch = await KvFileWatch.start(path);
   * assert.match(watch.problem!, /read-only/);
   * watch.close();
   * await Deno.remove(path);
   * ```
   */
  static async start(path: string, options: KvFileWatchOptions = {}): Promise<KvFileWatch> {
    const info = await Deno.stat(path).catch(() => undefined);
    const opened = info && { dev: info.dev, ino: info.ino };
    const watch = new KvFileWatch(path, opened, await kvFileProblem(path));
    const timer = setInterval(() => void watch.check(), options.intervalMs ?? 2_000);
    Deno.unrefTimer(timer);
    watch.#timer = timer;
    return watch;
  }

  /**
   * What is wrong with the file as last checked, or `undefined`.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { KvFileWatch } from "@anubis/core/kv";
   * const path = await Deno.makeTempFile();
   * const watch = await KvFileWatch.start(path);
   * assert.equal(watch.problem, undefined);
   * watch.close();
   * await Deno.remove(path);
   * ```
   */
  get problem(): string | undefined {
    return this.#problem;
  }

  /**
   * Throws {@link KvUnavailableError} while the file has a problem: what a
   * store calls before it reads or writes.
   *
   * @throws {KvUnavailableError} With the problem.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { KvFileWatch } from "@anubis/core/kv";
   * const path = await Deno.makeTempFile();
   * const watch = await KvFileWatch.start(path);
   * watch.assertUsable();
   * await Deno.remove(path);
   * await watch.check();
   * assert.throws(() => watch.assertUsable(), { name: "KvUnavailableError" });
   * watch.close();
   * ```
   */
  assertUsable(): void {
    if (this.#problem !== undefined) throw new KvUnavailableError(this.#problem);
  }

  /**
   * Checks the file now, logging a change.
   *
   * @returns The problem, or `undefined`.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { KvFileWatch } from "@anubis/core/kv";
   * const path = await Deno.makeTempFile();
   * const watch = await KvFileWatch.start(path);
   * assert.equal(await watch.check(), undefined);
   * watch.close();
   * await Deno.remove(path);
   * ```
   */
  async check(): Promise<string | undefined> {
    if (this.#checking || this.#lost) return this.#problem;
    this.#checking = true;
    try {
      const before = this.#problem;
      const found = await inspect(this.#path, this.#opened);
      const now = found?.problem;
      this.#lost = found?.lost ?? false;
      this.#problem = now;
      if (now !== undefined && now !== before) {
        logger.error("kv.unavailable", `${now}: its stores refuse work and readiness fails`, {
          path: this.#path,
          problem: now,
        });
      } else if (now === undefined && before !== undefined) {
        logger.info("kv.recovered", `the KV file ${this.#path} is usable again`, {
          path: this.#path,
        });
      }
      return now;
    } finally {
      this.#checking = false;
    }
  }

  /**
   * Stops checking.
   *
   * @example
   * ```ts
   * import { KvFileWatch } from "@anubis/core/kv";
   * const path = await Deno.makeTempFile();
   * (await KvFileWatch.start(path)).close();
   * await Deno.remove(path);
   * ```
   */
  close(): void {
    clearInterval(this.#timer);
  }
}
