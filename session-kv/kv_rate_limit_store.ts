/**
 * A Deno KV `RateLimitStore`: per-caller buckets every instance on the
 * database shares.
 *
 * @module
 */

import type { RateLimit, RateLimitStore } from "@anubis/core";
import { backoff, isLockedError, type KvKeyPart, type KvLike } from "@anubis/core/kv";

/**
 * Options of a {@link KvRateLimitStore}.
 *
 * @example
 * ```ts
 * import type { KvRateLimitStoreOptions } from "@anubis/session-kv";
 * const options: KvRateLimitStoreOptions = { prefix: ["my-app", "rate"] };
 * if (options.prefix?.[1] !== "rate") throw new Error("unexpected");
 * ```
 */
export interface KvRateLimitStoreOptions {
  /** Key prefix of the buckets (default `["anubis", "rate"]`). */
  prefix?: readonly KvKeyPart[];
  /** The clock, in ms (default `Date.now`). */
  now?: () => number;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
/** Commits tried before a contended bucket counts as empty for this request. */
const ATTEMPTS = 8;

/**
 * Token buckets in Deno KV, as GCRA: one value per caller, the time its
 * bucket is next full (its "theoretical arrival time"), as JSON bytes so
 * Deno and Node share it. A take reads it and commits the new time with a
 * versionstamp check: one read and one commit per request, and two
 * instances cannot spend the same token. A bucket contended past a few
 * retries refuses this request (for one token's time) rather than waiting.
 * Keys expire once their bucket is full again.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { KvRateLimitStore } from "@anubis/session-kv";
 * const kv = await Deno.openKv(":memory:");
 * const a = new KvRateLimitStore(kv);
 * const b = new KvRateLimitStore(kv); // another instance on the same database
 * const limit = { perSecond: 1, burst: 2 };
 * assert.equal(await a.take("ada", limit), 0);
 * assert.equal(await b.take("ada", limit), 0);
 * const wait = await a.take("ada", limit); // the burst is spent, across both
 * assert.ok(wait > 0 && wait <= 1000);
 * assert.equal(await b.take("eve", limit), 0); // another caller has a bucket of its own
 * kv.close();
 * ```
 */
export class KvRateLimitStore implements RateLimitStore {
  readonly #kv: KvLike;
  readonly #prefix: readonly KvKeyPart[];
  readonly #now: () => number;

  /**
   * Creates the store.
   *
   * @param kv The database (shared with the other instances).
   * @param options Key prefix and clock.
   */
  constructor(kv: KvLike, options: KvRateLimitStoreOptions = {}) {
    this.#kv = kv;
    this.#prefix = options.prefix ?? ["anubis", "rate"];
    this.#now = options.now ?? Date.now;
  }

  /**
   * Takes one token from `key`'s bucket.
   *
   * @param key The caller.
   * @param limit The bucket's rate and burst.
   * @returns 0 when allowed, else the milliseconds until a token is free.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { KvRateLimitStore } from "@anubis/session-kv";
   * const kv = await Deno.openKv(":memory:");
   * let now = 0;
   * const store = new KvRateLimitStore(kv, { now: () => now });
   * const limit = { perSecond: 10, burst: 1 };
   * assert.equal(await store.take("ada", limit), 0);
   * assert.equal(await store.take("ada", limit), 100);
   * now = 100; // one token's time later
   * assert.equal(await store.take("ada", limit), 0);
   * kv.close();
   * ```
   */
  async take(key: string, limit: RateLimit): Promise<number> {
    const interval = 1000 / limit.perSecond;
    const tolerance = (limit.burst - 1) * interval;
    const at = [...this.#prefix, key];
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      try {
        const entry = await this.#kv.get<Uint8Array>(at);
        const now = this.#now();
        const stored = entry.value instanceof Uint8Array
          ? Number(JSON.parse(decoder.decode(entry.value)))
          : 0;
        const arrival = Math.max(Number.isFinite(stored) ? stored : 0, now);
        if (arrival - now > tolerance) return Math.ceil(arrival - now - tolerance);
        const next = arrival + interval;
        const committed = await this.#kv.atomic()
          .check({ key: at, versionstamp: entry.versionstamp })
          .set(at, encoder.encode(JSON.stringify(next)), {
            expireIn: Math.ceil(next - now) + 1000,
          })
          .commit();
        if (committed.ok) return 0;
      } catch (error) {
        if (!isLockedError(error)) throw error;
      }
      await backoff(attempt);
    }
    return Math.ceil(interval);
  }
}
