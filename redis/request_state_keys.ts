/**
 * One `requestState` signing key for every instance on a Redis, with no
 * configuration: created once, atomically, by whichever instance comes
 * first, read by every other, and rotated without breaking rounds in flight
 * (as `SharedRequestStateKeys` of `@anubis/core/kv` does on Deno KV).
 *
 * @module
 */

import type { RequestStateCodec, RequestStateKeys } from "@anubis/core";
import { RotatingKeys } from "@anubis/core/kv";
import type { RedisConnection } from "./connection.ts";
import { command, commandTimeout, LuaScript } from "./_commands.ts";

/**
 * Options of {@link RedisRequestStateKeys}.
 *
 * @example
 * ```ts
 * import type { RedisRequestStateKeysOptions } from "@anubis/redis";
 * import assert from "node:assert/strict";
 * const options: RedisRequestStateKeysOptions = { rotateAfterMs: 24 * 3_600_000 };
 * assert.equal(options.rotateAfterMs, 86_400_000);
 * ```
 */
export interface RedisRequestStateKeysOptions {
  /** The key they live at (default `"anubis:request-state:keys"`). */
  key?: string;
  /**
   * Age after which the current secret is replaced, in ms (default 7 days;
   * `Infinity`: never). The instance that finds it stale rotates it.
   */
  rotateAfterMs?: number;
  /**
   * How long a replaced secret still opens states, in ms (default 15
   * minutes). It must cover the state lifetime (10 minutes by default) plus
   * the time instances take to read the new secret (their refresh interval).
   */
  previousWindowMs?: number;
  /** The clock, in ms (default `Date.now`). */
  now?: () => number;
  /** How long one Redis command may take before it rejects, in ms (default 5,000). */
  commandTimeoutMs?: number;
}

// KEYS: the record. ARGV: the value read ("" when none), the new value. 1 written, 0 changed meanwhile.
const REPLACE = new LuaScript(`
local current = redis.call('GET', KEYS[1]) or ''
if current ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
return 1`);

/**
 * The `requestState` keys of every instance sharing a Redis. {@link load}
 * returns them, creating the first secret if there is none and rotating one
 * older than `rotateAfterMs`; both are a compare-and-set in one Lua script
 * on the value read, so concurrent first starts agree on one secret and one
 * instance rotates. A rotated-out secret keeps opening states for
 * `previousWindowMs`. {@link attach} hands them to a codec and keeps it
 * current. The key has no expiry: keep Redis persistent (AOF or RDB), or a
 * restart makes a new secret and states in flight fail once.
 *
 * @example
 * ```ts ignore
 * import assert from "node:assert/strict";
 * import { RequestStateCodec } from "@anubis/core";
 * import { openRedis, RedisRequestStateKeys } from "@anubis/redis";
 * const redis = await openRedis("redis://127.0.0.1:6379");
 * const [a, b] = [new RequestStateCodec(), new RequestStateCodec()];
 * const stopA = await new RedisRequestStateKeys(redis).attach(a);
 * const stopB = await new RedisRequestStateKeys(redis).attach(b);
 * const payload = { method: "tools/call", target: "t", answers: {}, round: 1 };
 * assert.equal((await b.open(await a.seal(payload), "tools/call", "t")).round, 1);
 * stopA();
 * stopB();
 * redis.close();
 * ```
 */
export class RedisRequestStateKeys {
  readonly #keys: RotatingKeys<string>;

  /**
   * Creates the keys' handle (nothing is read until {@link load}).
   *
   * @param redis The connection the instances share, from `openRedis`.
   * @param options Where, how often to rotate, and the command timeout.
   */
  constructor(redis: RedisConnection, options: RedisRequestStateKeysOptions = {}) {
    const key = options.key ?? "anubis:request-state:keys";
    const timeout = commandTimeout(options.commandTimeoutMs);
    this.#keys = new RotatingKeys<string>({
      async read() {
        const raw = await command(redis, ["GET", key], timeout);
        const text = typeof raw === "string" ? raw : "";
        return { text: text || undefined, version: text };
      },
      async replace(read, text) {
        return await REPLACE.run(redis, [key], [read, text], timeout) === 1;
      },
    }, { ...options, maxRaces: 101, source: "Redis" });
  }

  /**
   * The current keys: created when missing, rotated when stale.
   *
   * @returns The signing secret and the previous one while in its window.
   * @throws {Error} When Redis fails or does not answer in time.
   *
   * @example
   * ```ts ignore
   * import assert from "node:assert/strict";
   * import { openRedis, RedisRequestStateKeys } from "@anubis/redis";
   * const redis = await openRedis("redis://127.0.0.1:6379");
   * const [first, second] = await Promise.all([
   *   new RedisRequestStateKeys(redis).load(),
   *   new RedisRequestStateKeys(redis).load(),
   * ]);
   * assert.deepEqual(first.secret, second.secret);
   * redis.close();
   * ```
   */
  load(): Promise<RequestStateKeys> {
    return this.#keys.load();
  }

  /**
   * Replaces the signing secret now, keeping the current one as the previous
   * (for `previousWindowMs`). Other instances pick it up on their next
   * refresh, or at once when a state signed with it reaches them.
   *
   * @returns The new keys.
   *
   * @example
   * ```ts ignore
   * import assert from "node:assert/strict";
   * import { openRedis, RedisRequestStateKeys } from "@anubis/redis";
   * const redis = await openRedis("redis://127.0.0.1:6379");
   * const keys = new RedisRequestStateKeys(redis);
   * const before = await keys.load();
   * const after = await keys.rotate();
   * assert.deepEqual(after.previousSecrets, [before.secret]);
   * redis.close();
   * ```
   */
  rotate(): Promise<RequestStateKeys> {
    return this.#keys.rotate();
  }

  /**
   * Gives `codec` the shared keys, reloads them every `refreshMs` (and when a
   * state no known key opens arrives), until the returned function is called.
   * Call the returned function before closing the connection.
   *
   * @param codec The server's codec (`server.requestState`).
   * @param refreshMs How often to read the keys again (default one minute).
   * @returns Stops refreshing.
   * @throws {Error} When the first load fails.
   *
   * @example
   * ```ts ignore
   * import assert from "node:assert/strict";
   * import { RequestStateCodec } from "@anubis/core";
   * import { openRedis, RedisRequestStateKeys } from "@anubis/redis";
   * const redis = await openRedis("redis://127.0.0.1:6379");
   * const codec = new RequestStateCodec();
   * const stop = await new RedisRequestStateKeys(redis).attach(codec);
   * assert.equal(codec.hasSecret, true);
   * stop();
   * redis.close();
   * ```
   */
  attach(codec: RequestStateCodec, refreshMs = 60_000): Promise<() => void> {
    return this.#keys.attach(codec, refreshMs);
  }
}
