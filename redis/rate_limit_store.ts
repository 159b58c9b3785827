/**
 * A Redis `RateLimitStore`: per-caller buckets every instance on the same
 * Redis shares.
 *
 * @module
 */

import type { RateLimit, RateLimitStore } from "@anubis/core";
import type { RedisConnection } from "./connection.ts";
import { commandTimeout, LuaScript } from "./_commands.ts";

/**
 * Options of a {@link RedisRateLimitStore}.
 *
 * @example
 * ```ts
 * import type { RedisRateLimitStoreOptions } from "@anubis/redis";
 * import assert from "node:assert/strict";
 * const options: RedisRateLimitStoreOptions = { prefix: "my-app:rate:" };
 * assert.equal(options.prefix, "my-app:rate:");
 * ```
 */
export interface RedisRateLimitStoreOptions {
  /**
   * What every bucket's key starts with (default `"anubis:rate:"`; no hash
   * tag needed: each bucket is one key, so buckets spread over a cluster).
   */
  prefix?: string;
  /**
   * The clock, in ms (default: Redis's own `TIME`, one clock for every
   * instance however their clocks drift).
   */
  now?: () => number;
  /** How long one Redis command may take before it rejects, in ms (default 5,000). */
  commandTimeoutMs?: number;
}

// GCRA: the key holds the bucket's theoretical arrival time (when it is next
// full), in ms. KEYS: bucket. ARGV: interval ms, tolerance ms, now ("" for
// Redis's TIME). Returns 0 (allowed) or the ms until a token is free.
const TAKE = new LuaScript(`
local now = tonumber(ARGV[3])
if not now then
  local t = redis.call('TIME')
  now = t[1] * 1000 + t[2] / 1000
end
local interval = tonumber(ARGV[1])
local tolerance = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1])) or now
if tat < now then tat = now end
if tat - now > tolerance then
  return math.max(1, math.ceil(tat - now - tolerance))
end
local nextTat = tat + interval
redis.call('SET', KEYS[1], string.format('%.3f', nextTat), 'PX', math.ceil(nextTat - now) + 1000)
return 0`);

/**
 * Token buckets in Redis, as GCRA in one Lua script per take: the key of a
 * caller holds the time its bucket is next full; a take reads it, decides
 * and writes it in one atomic step, so instances never spend the same token
 * and a take is one round trip. Keys expire once their bucket is full again.
 * Every command is bounded by `commandTimeoutMs` (a take that cannot reach
 * Redis rejects, and the request is refused: stores fail closed).
 *
 * @example
 * ```ts ignore
 * import assert from "node:assert/strict";
 * import { openRedis, RedisRateLimitStore } from "@anubis/redis";
 * const redis = await openRedis("redis://127.0.0.1:6379");
 * const a = new RedisRateLimitStore(redis);
 * const b = new RedisRateLimitStore(redis); // another instance on the same Redis
 * const limit = { perSecond: 1, burst: 2 };
 * assert.equal(await a.take("ada", limit), 0);
 * assert.equal(await b.take("ada", limit), 0);
 * assert.ok(await a.take("ada", limit) > 0); // the burst is spent, across both
 * redis.close();
 * ```
 */
export class RedisRateLimitStore implements RateLimitStore {
  readonly #redis: RedisConnection;
  readonly #prefix: string;
  readonly #now: (() => number) | undefined;
  readonly #timeout: number;

  /**
   * Creates the store on a connection the caller owns (and closes).
   *
   * @param redis The connection, from `openRedis`.
   * @param options Key prefix, clock and command timeout.
   */
  constructor(redis: RedisConnection, options: RedisRateLimitStoreOptions = {}) {
    this.#redis = redis;
    this.#prefix = options.prefix ?? "anubis:rate:";
    this.#now = options.now;
    this.#timeout = commandTimeout(options.commandTimeoutMs);
  }

  /**
   * Takes one token from `key`'s bucket.
   *
   * @param key The caller.
   * @param limit The bucket's rate and burst.
   * @returns 0 when allowed, else the milliseconds until a token is free.
   * @throws {RangeError} When the limit is not a positive rate and a burst of at least 1.
   *
   * @example
   * ```ts ignore
   * import assert from "node:assert/strict";
   * import { openRedis, RedisRateLimitStore } from "@anubis/redis";
   * const redis = await openRedis("redis://127.0.0.1:6379");
   * let now = 0;
   * const store = new RedisRateLimitStore(redis, { now: () => now });
   * const limit = { perSecond: 10, burst: 1 };
   * assert.equal(await store.take("ada", limit), 0);
   * assert.equal(await store.take("ada", limit), 100);
   * now = 100; // one token's time later
   * assert.equal(await store.take("ada", limit), 0);
   * redis.close();
   * ```
   */
  async take(key: string, limit: RateLimit): Promise<number> {
    if (!(limit.perSecond > 0) || !(limit.burst >= 1) || !Number.isFinite(limit.burst)) {
      throw new RangeError(
        `A rate limit needs perSecond > 0 and burst >= 1, got ${limit.perSecond}/${limit.burst}`,
      );
    }
    const interval = 1000 / limit.perSecond;
    const tolerance = (Math.floor(limit.burst) - 1) * interval;
    const wait = await TAKE.run(
      this.#redis,
      [this.#prefix + key],
      [interval, tolerance, this.#now ? this.#now() : ""],
      this.#timeout,
    );
    return Number(wait);
  }
}
