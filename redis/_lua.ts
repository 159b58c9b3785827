/**
 * Commands and Lua scripts for the Redis stores, each bounded by a command
 * timeout (a command never waits for ever while Redis is down: it rejects
 * after `timeoutMs`, queued or sent). Scripts run by `EVALSHA`, loaded with
 * `SCRIPT LOAD` on first use and loaded again when the server answers
 * `NOSCRIPT` (a restarted Redis has forgotten them). Private to the package.
 *
 * @module
 */

import { clientOf, isTimeout } from "./_client.ts";
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

/**
 * Sends one command; rejects when no answer came within `timeoutMs` (the
 * command may have run: callers retry only idempotent ones).
 */
export async function command<T extends Reply = Reply>(
  redis: RedisConnection,
  args: readonly string[],
  timeoutMs: number,
): Promise<T> {
  try {
    return await clientOf(redis).sendCommand<T>(args, {
      timeout: timeoutMs,
      rejectInFlight: true,
    });
  } catch (error) {
    if (isTimeout(error)) {
      throw new Error(`Redis did not answer ${args[0]} within ${timeoutMs} ms`, { cause: error });
    }
    throw error;
  }
}

/** A Lua script, run by its SHA1 and loaded when the server lacks it. */
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
  async run<T extends Reply = Reply>(
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
