/**
 * Commands and Lua scripts for every Redis store of this package, each
 * bounded by a command timeout: a command never waits for ever while Redis
 * is down; it rejects after `timeoutMs`, whether it waits to be sent or for
 * its reply. Scripts run by `EVALSHA`, loaded with `SCRIPT LOAD` on first use
 * and loaded again when the server answers `NOSCRIPT` (a restarted Redis has
 * forgotten them). Private to the package.
 *
 * The deadlines are checked by one sweep timer (every 100 ms, only while
 * commands wait), not by the client's per-command timeout: a timer per
 * command (node-redis `timeout` with `rejectInFlight`) halved the rate of
 * raw commands on a loopback Redis. The price: a command that timed out
 * while Redis was down may still run when it comes back (callers retry only
 * idempotent commands, as with any timeout).
 *
 * @module
 */

import { clientOf } from "./_client.ts";
import type { RedisConnection } from "./connection.ts";

/** The command timeout of every store, unless its options say otherwise (ms). */
export const DEFAULT_COMMAND_TIMEOUT_MS = 5_000;

/** A reply as the client returns it: strings, integers, nulls and arrays of them. */
export type Reply = string | number | null | Reply[];

/** Checks a command timeout option: a positive finite number of ms. */
export function commandTimeout(ms: number | undefined): number {
  const timeout = ms ?? DEFAULT_COMMAND_TIMEOUT_MS;
  if (!(timeout > 0) || !Number.isFinite(timeout)) {
    throw new RangeError(`commandTimeoutMs must be a positive number, got ${ms}`);
  }
  return timeout;
}

/** A command waiting for its reply: when it gives up, and how. */
interface Pending {
  at: number;
  name: string;
  timeoutMs: number;
  reject: (error: Error) => void;
}

const pending = new Set<Pending>();
let sweeper: ReturnType<typeof setInterval> | undefined;

function sweep(): void {
  const now = Date.now();
  for (const entry of pending) {
    if (entry.at > now) continue;
    pending.delete(entry);
    entry.reject(new Error(`Redis did not answer ${entry.name} within ${entry.timeoutMs} ms`));
  }
  if (pending.size === 0) {
    clearInterval(sweeper);
    sweeper = undefined;
  }
}

/**
 * Sends one command on `redis`; rejects when no answer came within
 * `timeoutMs` (give or take 100 ms). The command may have run: callers retry
 * only idempotent ones.
 */
export function command<T = Reply>(
  redis: RedisConnection,
  args: readonly string[],
  timeoutMs: number,
): Promise<T> {
  const client = clientOf(redis);
  return new Promise<T>((resolve, reject) => {
    const entry: Pending = { at: Date.now() + timeoutMs, name: args[0], timeoutMs, reject };
    pending.add(entry);
    sweeper ??= setInterval(sweep, 100);
    client.sendCommand<T>(args as string[]).then((value) => {
      pending.delete(entry);
      resolve(value);
    }, (error) => {
      pending.delete(entry);
      reject(error);
    });
  });
}

/** A Lua script, run by its SHA-1 and loaded when the server lacks it. */
export class LuaScript {
  readonly #source: string;
  #sha: Promise<string> | undefined;

  constructor(source: string) {
    this.#source = source;
  }

  /**
   * Runs the script with `keys` and `args`.
   *
   * @throws When it fails, or Redis does not answer within `timeoutMs`.
   */
  async run<T = Reply>(
    redis: RedisConnection,
    keys: readonly string[],
    args: readonly (string | number)[],
    timeoutMs: number,
  ): Promise<T> {
    const tail = [String(keys.length), ...keys, ...args.map(String)];
    for (let attempt = 0;; attempt++) {
      const sha = this.#sha ??= this.#load(redis, timeoutMs);
      try {
        return await command<T>(redis, ["EVALSHA", await sha, ...tail], timeoutMs);
      } catch (error) {
        if (attempt > 0 || !String((error as Error)?.message).startsWith("NOSCRIPT")) throw error;
        if (this.#sha === sha) this.#sha = undefined; // the server restarted: load it again
      }
    }
  }

  async #load(redis: RedisConnection, timeoutMs: number): Promise<string> {
    try {
      return await command<string>(redis, ["SCRIPT", "LOAD", this.#source], timeoutMs);
    } catch (error) {
      this.#sha = undefined;
      throw error;
    }
  }
}
