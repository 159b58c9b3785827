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

/** Takes of one caller waiting for the same read and commit. */
interface Batch {
  readonly limit: RateLimit;
  readonly takers: { resolve(wait: number): void; reject(error: unknown): void }[];
}

/**
 * Token buckets in Deno KV, as GCRA: one value per caller, the time its
 * bucket is next full (its "theoretical arrival time"), as JSON bytes so
 * Deno and Node share it. A take reads it and commits the new time with a
 * versionstamp check, so two instances cannot spend the same token. Takes
 * of one caller that arrive while its commit is in flight wait for it and
 * then go together, in one read and one commit: a busy caller costs one
 * commit per round trip to the database, not one per request, and never
 * races itself. A bucket contended past a few retries (other instances)
 * refuses the batch for one token's time. Keys expire once their bucket is
 * full again.
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
 * // Three at once: one read and one commit, the burst decides who goes.
 * const waits = await Promise.all([1, 2, 3].map(() => a.take("zoe", limit)));
 * assert.deepEqual(waits.map((w) => w > 0), [false, false, true]);
 * kv.close();
 * ```
 */
export class KvRateLimitStore implements RateLimitStore {
  readonly #kv: KvLike;
  readonly #prefix: readonly KvKeyPart[];
  readonly #now: () => number;
  /** Per caller: the takes waiting for the commit in flight (an empty batch: none wait). */
  readonly #next = new Map<string, Batch>();

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
  take(key: string, limit: RateLimit): Promise<number> {
    return new Promise((resolve, reject) => {
      const waiting = this.#next.get(key);
      if (waiting) {
        waiting.takers.push({ resolve, reject });
        return;
      }
      this.#run(key, { limit, takers: [{ resolve, reject }] });
    });
  }

  /** Serves a batch, then the takes that arrived meanwhile, until none did. */
  async #run(key: string, batch: Batch): Promise<void> {
    for (let current: Batch | undefined = batch; current;) {
      const next: Batch = { limit: current.limit, takers: [] };
      this.#next.set(key, next);
      try {
        const waits = await this.#takeMany(key, current.limit, current.takers.length);
        current.takers.forEach((taker, i) => taker.resolve(waits(i)));
      } catch (error) {
        for (const taker of current.takers) taker.reject(error);
      }
      current = next.takers.length > 0 ? next : undefined;
    }
    this.#next.delete(key);
  }

  /** Takes `count` tokens in one read and commit: the wait of the i-th taker. */
  async #takeMany(key: string, limit: RateLimit, count: number): Promise<(i: number) => number> {
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
        // How many fit: each admitted one moves the arrival time one interval on.
        const room = Math.floor((tolerance - (arrival - now)) / interval) + 1;
        const admitted = Math.max(0, Math.min(count, room));
        const next = arrival + admitted * interval;
        const refused = Math.max(1, Math.ceil(next - now - tolerance));
        const waits = (i: number) => i < admitted ? 0 : refused;
        if (admitted === 0) return waits;
        const committed = await this.#kv.atomic()
          .check({ key: at, versionstamp: entry.versionstamp })
          .set(at, encoder.encode(JSON.stringify(next)), {
            expireIn: Math.ceil(next - now) + 1000,
          })
          .commit();
        if (committed.ok) return waits;
      } catch (error) {
        if (!isLockedError(error)) throw error;
      }
      await backoff(attempt);
    }
    const contended = Math.ceil(interval);
    return () => contended;
  }
}
