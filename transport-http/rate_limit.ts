/**
 * Per-caller rate limits: a token bucket per principal (the verified
 * token's subject) or, without auth, per client address; in this process's
 * memory, or in a shared `RateLimitStore` (every instance one limit).
 *
 * @module
 */

import type { RateLimitStore } from "@anubis/core";

/**
 * The `rateLimit` option of the HTTP handler: each caller may send `burst`
 * POSTs at once and `perSecond` a second on average; beyond that, 429 with
 * `Retry-After` and a JSON-RPC error body. Defaults: 20 a second, bursts of 40,
 * in this process's memory (`store` shares the buckets between instances).
 *
 * @example
 * ```ts
 * import type { RateLimitOptions } from "@anubis/transport-http";
 * const limit: RateLimitOptions = { perSecond: 5, burst: 10 };
 * if (limit.burst !== 10) throw new Error("unexpected");
 * ```
 */
export interface RateLimitOptions {
  /** The sustained rate per caller, in requests a second (default 20). */
  perSecond?: number;
  /** The most requests a caller may send at once (default 40). */
  burst?: number;
  /** The most callers tracked at once in memory (default 10,000; the stalest is forgotten). */
  maxCallers?: number;
  /**
   * Keeps the buckets where every instance sees them (`KvRateLimitStore` of
   * `@anubis/session-kv`), one await per POST; default: this process's memory.
   */
  store?: RateLimitStore;
}

/** Token buckets keyed by caller, in this process's memory or in the options' store. */
export class TokenBuckets {
  readonly #rate: number;
  readonly #burst: number;
  readonly #max: number;
  readonly #store: RateLimitStore | undefined;
  readonly #limit: { perSecond: number; burst: number };
  readonly #buckets = new Map<string, { tokens: number; at: number }>();

  /**
   * Creates them.
   *
   * @param options Rate and burst.
   */
  constructor(options: RateLimitOptions) {
    this.#rate = options.perSecond ?? 20;
    this.#burst = options.burst ?? 40;
    this.#max = options.maxCallers ?? 10_000;
    if (!(this.#rate > 0) || !(this.#burst >= 1)) {
      throw new RangeError("rateLimit needs perSecond > 0 and burst >= 1");
    }
    this.#store = options.store;
    this.#limit = { perSecond: this.#rate, burst: this.#burst };
  }

  /**
   * Takes one token from a caller's bucket.
   *
   * @param key The caller.
   * @param now The time in milliseconds.
   * @returns 0 when allowed, else how many milliseconds until a token is
   *   free; a promise of it with a store.
   */
  take(key: string, now = Date.now()): number | Promise<number> {
    if (this.#store !== undefined) return this.#store.take(key, this.#limit);
    let bucket = this.#buckets.get(key);
    if (bucket === undefined) {
      if (this.#buckets.size >= this.#max) this.#buckets.delete(this.#buckets.keys().next().value!);
      bucket = { tokens: this.#burst, at: now };
    } else {
      // Move to the end: the first entry is the stalest.
      this.#buckets.delete(key);
      bucket.tokens = Math.min(
        this.#burst,
        bucket.tokens + ((now - bucket.at) * this.#rate) / 1000,
      );
      bucket.at = now;
    }
    this.#buckets.set(key, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return Math.ceil(((1 - bucket.tokens) * 1000) / this.#rate);
  }
}
