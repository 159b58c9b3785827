/**
 * Commands with a deadline, and Lua scripts by their SHA-1: what every store
 * of this package sends to Redis goes through here.
 *
 * @module
 */

import type { RawRedisClient } from "./_client.ts";

/** A command waiting for its reply: when it gives up, and how. */
interface Pending {
  at: number;
  reject: (error: Error) => void;
}

/**
 * The deadlines of every command in flight, checked by one sweep timer (100
 * ms) that runs only while commands wait: a timer per command costs more
 * than the command on a fast Redis.
 */
const pending = new Set<Pending>();
let sweeper: ReturnType<typeof setInterval> | undefined;

function sweep(): void {
  const now = Date.now();
  for (const entry of pending) {
    if (entry.at > now) continue;
    pending.delete(entry);
    entry.reject(new Error("Redis did not answer in time (commandTimeoutMs)"));
  }
  if (pending.size === 0) {
    clearInterval(sweeper);
    sweeper = undefined;
  }
}

/**
 * Runs `args` on `client`; rejects after `timeoutMs` (give or take 100 ms)
 * when no reply came, whether the command waits to be sent (Redis down) or
 * for its reply.
 */
export function command<T>(client: RawRedisClient, args: string[], timeoutMs: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const entry: Pending = { at: Date.now() + timeoutMs, reject };
    pending.add(entry);
    if (sweeper === undefined) {
      sweeper = setInterval(sweep, 100);
    }
    client.sendCommand<T>(args).then((value) => {
      pending.delete(entry);
      resolve(value);
    }, (error) => {
      pending.delete(entry);
      reject(error);
    });
  });
}

/** A Lua script, run by `EVALSHA` (loaded with `EVAL` when the server lacks it). */
export class Script {
  readonly #source: string;
  #sha: Promise<string> | undefined;

  constructor(source: string) {
    this.#source = source;
  }

  async run<T>(
    client: RawRedisClient,
    keys: string[],
    args: string[],
    timeoutMs: number,
  ): Promise<T> {
    this.#sha ??= sha1(this.#source);
    const tail = [String(keys.length), ...keys, ...args];
    try {
      return await command<T>(client, ["EVALSHA", await this.#sha, ...tail], timeoutMs);
    } catch (error) {
      if (!String((error as Error)?.message ?? error).startsWith("NOSCRIPT")) throw error;
      return await command<T>(client, ["EVAL", this.#source, ...tail], timeoutMs);
    }
  }
}

async function sha1(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-1", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}
