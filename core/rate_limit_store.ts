/**
 * The `RateLimitStore` contract: per-caller token buckets kept where every
 * instance sees them, so a caller's rate is one limit however a load
 * balancer spreads its requests. The HTTP transport's `rateLimit.store`
 * takes one (in memory when none is given); `@anubis/session-kv` has the
 * Deno KV one.
 *
 * @module
 */

/**
 * A bucket's shape: `perSecond` tokens flow in a second, at most `burst`
 * are held (a caller may send `burst` requests at once).
 *
 * @example
 * ```ts
 * import type { RateLimit } from "@anubis/core";
 * const limit: RateLimit = { perSecond: 20, burst: 40 };
 * if (limit.burst !== 40) throw new Error("unexpected");
 * ```
 */
export interface RateLimit {
  /** The sustained rate, in requests a second (> 0). */
  readonly perSecond: number;
  /** The most requests at once (>= 1). */
  readonly burst: number;
}

/**
 * Takes tokens from shared per-caller buckets. A store that cannot answer
 * rejects (the request is then refused: stores fail closed).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { RateLimit, RateLimitStore } from "@anubis/core";
 * // Allows `burst` requests per key and no more (no refill): the contract's shape.
 * class CountingStore implements RateLimitStore {
 *   #taken = new Map<string, number>();
 *   take(key: string, limit: RateLimit): Promise<number> {
 *     const taken = this.#taken.get(key) ?? 0;
 *     if (taken >= limit.burst) return Promise.resolve(1000 / limit.perSecond);
 *     this.#taken.set(key, taken + 1);
 *     return Promise.resolve(0);
 *   }
 * }
 * const store = new CountingStore();
 * const limit = { perSecond: 1, burst: 1 };
 * assert.equal(await store.take("ada", limit), 0);
 * assert.equal(await store.take("ada", limit), 1000);
 * ```
 */
export interface RateLimitStore {
  /**
   * Takes one token from `key`'s bucket.
   *
   * @param key The caller (a principal, or a client address).
   * @param limit The bucket's rate and burst.
   * @returns 0 when the request may go, else how many milliseconds until
   *   a token is free.
   */
  take(key: string, limit: RateLimit): Promise<number>;
}
