/**
 * Commands with a deadline, and Lua scripts by their SHA-1: what every store
 * of this package sends to Redis goes through here.
 *
 * @module
 */

import type { RawRedisClient } from "./_client.ts";

/** Runs `args` on `client`, rejecting after `timeoutMs` even once it was sent. */
export function command<T>(client: RawRedisClient, args: string[], timeoutMs: number): Promise<T> {
  return client.sendCommand<T>(args, { timeout: timeoutMs, rejectInFlight: true });
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
