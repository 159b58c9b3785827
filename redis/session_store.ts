/**
 * A Redis `SessionStore`: legacy sessions any instance on the same Redis can
 * restore, surviving restarts of the instances (and of Redis, with AOF or
 * RDB persistence on).
 *
 * @module
 */

import type { SessionRecord, SessionStore } from "@anubis/core";
import { assertJsonSafe } from "@anubis/core/engine";
import type { RedisConnection } from "./connection.ts";
import { command, commandTimeout, LuaScript } from "./_commands.ts";

/**
 * Options of a {@link RedisSessionStore}.
 *
 * @example
 * ```ts
 * import type { RedisSessionStoreOptions } from "@anubis/redis";
 * import assert from "node:assert/strict";
 * const options: RedisSessionStoreOptions = { prefix: "{my-app:sessions}:", maxSessions: 50_000 };
 * assert.equal(options.maxSessions, 50_000);
 * ```
 */
export interface RedisSessionStoreOptions {
  /**
   * What every key of the store starts with (default `"{anubis:sessions}:"`).
   * Keep a hash tag (`{…}`) in it: the store's scripts touch a record and the
   * shared index together, which Redis Cluster allows only within one slot.
   */
  prefix?: string;
  /** The largest record, in bytes of JSON (default 1 MiB); larger ones are refused with a `RangeError`. */
  maxRecordBytes?: number;
  /**
   * The most live sessions in the store, over every instance sharing it
   * (default 100,000): a `save` of a new session beyond it is refused with a
   * {@link RedisStoreFullError}. Expired and deleted sessions leave the count.
   */
  maxSessions?: number;
  /** How long one Redis command may take before it rejects, in ms (default 5,000). */
  commandTimeoutMs?: number;
}

/**
 * What a Redis store rejects a write with when it holds as many entries as
 * its bound allows (over every instance sharing it).
 *
 * @example
 * ```ts
 * import { RedisStoreFullError } from "@anubis/redis";
 * import assert from "node:assert/strict";
 * const error = new RedisStoreFullError("sessions", 100_000);
 * assert.equal(error.limit, 100_000);
 * assert.match(error.message, /100000 sessions/);
 * ```
 */
export class RedisStoreFullError extends Error {
  /**
   * The bound that was hit.
   *
   * @example
   * ```ts
   * import { RedisStoreFullError } from "@anubis/redis";
   * import assert from "node:assert/strict";
   * assert.equal(new RedisStoreFullError("sessions", 3).limit, 3);
   * ```
   */
  readonly limit: number;

  /**
   * Makes the error.
   *
   * @param what What the store keeps (`"sessions"`).
   * @param limit The bound.
   */
  constructor(what: string, limit: number) {
    super(`The Redis store is full (${limit} ${what}); try again later`);
    this.name = "RedisStoreFullError";
    this.limit = limit;
  }
}

// Server time, so instances with skewed clocks agree on when a session expires.
const NOW = "local t = redis.call('TIME') local now = t[1] * 1000 + math.floor(t[2] / 1000)";

// KEYS: record, index. ARGV: id, json, ttlMs, maxSessions. 1 saved, 0 full.
const SAVE = new LuaScript(`${NOW}
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
if not redis.call('ZSCORE', KEYS[2], ARGV[1])
  and redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[4]) then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[3]), ARGV[1])
return 1`);

// KEYS: record, index. ARGV: id, ttlMs.
const TOUCH = new LuaScript(`${NOW}
if redis.call('PEXPIRE', KEYS[1], ARGV[2]) == 1 then
  redis.call('ZADD', KEYS[2], now + tonumber(ARGV[2]), ARGV[1])
end
return 1`);

// KEYS: record, index. ARGV: id.
const DELETE = new LuaScript(`redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
return 1`);

const encoder = new TextEncoder();

function ttl(ttlMs: number): number {
  if (!(ttlMs > 0) || !Number.isFinite(ttlMs)) {
    throw new RangeError(`ttlMs must be a positive number, got ${ttlMs}`);
  }
  return Math.ceil(ttlMs);
}

function positive(name: string, value: number): number {
  if (!(value >= 1) || !Number.isFinite(value)) {
    throw new RangeError(`${name} must be a positive number, got ${value}`);
  }
  return Math.floor(value);
}

/** Escapes what `SCAN MATCH` would read as a pattern. */
function globEscape(text: string): string {
  return text.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
}

/**
 * The `SessionStore` of `@anubis/core` on Redis.
 *
 * - A record is JSON in a string at `<prefix>s:<id>` with Redis's own expiry
 *   (`PX`, exact to the millisecond); `touch` slides it.
 * - Bounded by default: a record over `maxRecordBytes` is refused with a
 *   `RangeError`, and a new session beyond `maxSessions` (counted in a sorted
 *   set of ids by expiry, `<prefix>index`, shared by every instance) with a
 *   {@link RedisStoreFullError}. The check and the write are one Lua script,
 *   so instances saving at once cannot pass the bound together.
 * - Only JSON-safe records are stored: anything else is refused with a
 *   `TypeError` naming the path, such as `assigns.db is not JSON-safe (a Map)`.
 * - Every command is bounded by `commandTimeoutMs`: while Redis is down a
 *   method rejects (stores fail closed) rather than waiting.
 *
 * @example
 * ```ts ignore
 * import { openRedis, RedisSessionStore } from "@anubis/redis";
 * import assert from "node:assert/strict";
 * const redis = await openRedis("redis://127.0.0.1:6379");
 * const sessions = new RedisSessionStore(redis);
 * await sessions.save({
 *   v: 1, id: "s1", protocolVersion: "2025-11-25", clientInfo: { name: "c", version: "1" },
 *   clientCapabilities: {}, initialized: true, subscriptions: [], assigns: { userId: 7 },
 *   updatedAt: Date.now(),
 * }, 30 * 60_000);
 * assert.deepEqual((await sessions.load("s1"))?.assigns, { userId: 7 });
 * redis.close();
 * ```
 */
export class RedisSessionStore implements SessionStore {
  readonly #redis: RedisConnection;
  readonly #prefix: string;
  readonly #index: string;
  readonly #maxBytes: number;
  readonly #max: number;
  readonly #timeout: number;

  /**
   * Creates a store on a connection the caller owns (and closes).
   *
   * @param redis The connection, from `openRedis`.
   * @param options Key prefix, bounds and command timeout.
   */
  constructor(redis: RedisConnection, options: RedisSessionStoreOptions = {}) {
    this.#redis = redis;
    this.#prefix = options.prefix ?? "{anubis:sessions}:";
    this.#index = `${this.#prefix}index`;
    this.#maxBytes = positive("maxRecordBytes", options.maxRecordBytes ?? 1024 * 1024);
    this.#max = positive("maxSessions", options.maxSessions ?? 100_000);
    this.#timeout = commandTimeout(options.commandTimeoutMs);
  }

  /**
   * Writes (or replaces) a record that loads for `ttlMs` from now.
   *
   * @param record The record.
   * @param ttlMs Time to live in milliseconds.
   * @throws {TypeError} When part of the record is not JSON-safe (naming it).
   * @throws {RangeError} When the record is over `maxRecordBytes`.
   * @throws {RedisStoreFullError} When it is a new session and the store holds `maxSessions`.
   *
   * @example
   * ```ts ignore
   * import { openRedis, RedisSessionStore, RedisStoreFullError } from "@anubis/redis";
   * import assert from "node:assert/strict";
   * const redis = await openRedis("redis://127.0.0.1:6379");
   * const sessions = new RedisSessionStore(redis, { prefix: "{doc}:", maxSessions: 1 });
   * const record = (id: string) => ({
   *   v: 1 as const, id, protocolVersion: "2025-11-25", clientInfo: { name: "c", version: "1" },
   *   clientCapabilities: {}, initialized: true, subscriptions: [], assigns: {}, updatedAt: 0,
   * });
   * await sessions.save(record("a"), 60_000);
   * await assert.rejects(sessions.save(record("b"), 60_000), RedisStoreFullError);
   * redis.close();
   * ```
   */
  async save(record: SessionRecord, ttlMs: number): Promise<void> {
    assertJsonSafe(record.assigns, "assigns");
    assertJsonSafe(record, "session record");
    const lifetime = ttl(ttlMs);
    const json = JSON.stringify(record);
    const bytes = json.length * 3 <= this.#maxBytes ? json.length : encoder.encode(json).length;
    if (bytes > this.#maxBytes) {
      throw new RangeError(
        `Session ${record.id} is too large to store (${bytes} bytes of JSON; a record may take ` +
          `at most ${this.#maxBytes})`,
      );
    }
    const saved = await SAVE.run(
      this.#redis,
      [this.#key(record.id), this.#index],
      [record.id, json, lifetime, this.#max],
      this.#timeout,
    );
    if (saved !== 1) throw new RedisStoreFullError("sessions", this.#max);
  }

  /**
   * Reads a record; unknown and expired ids give `undefined`.
   *
   * @param id The session id.
   * @returns The record, or `undefined`.
   *
   * @example
   * ```ts ignore
   * import { openRedis, RedisSessionStore } from "@anubis/redis";
   * import assert from "node:assert/strict";
   * const redis = await openRedis("redis://127.0.0.1:6379");
   * assert.equal(await new RedisSessionStore(redis).load("nobody"), undefined);
   * redis.close();
   * ```
   */
  async load(id: string): Promise<SessionRecord | undefined> {
    const json = await command(this.#redis, ["GET", this.#key(id)], this.#timeout);
    return typeof json === "string" ? JSON.parse(json) as SessionRecord : undefined;
  }

  /**
   * Makes a live record load for `ttlMs` from now; unknown and expired ids
   * are ignored.
   *
   * @param id The session id.
   * @param ttlMs Time to live in milliseconds.
   *
   * @example
   * ```ts ignore
   * import { openRedis, RedisSessionStore } from "@anubis/redis";
   * const redis = await openRedis("redis://127.0.0.1:6379");
   * await new RedisSessionStore(redis).touch("nobody", 60_000); // no-op
   * redis.close();
   * ```
   */
  async touch(id: string, ttlMs: number): Promise<void> {
    const lifetime = ttl(ttlMs);
    await TOUCH.run(this.#redis, [this.#key(id), this.#index], [id, lifetime], this.#timeout);
  }

  /**
   * Removes a record. Idempotent.
   *
   * @param id The session id.
   *
   * @example
   * ```ts ignore
   * import { openRedis, RedisSessionStore } from "@anubis/redis";
   * const redis = await openRedis("redis://127.0.0.1:6379");
   * await new RedisSessionStore(redis).delete("nobody");
   * redis.close();
   * ```
   */
  async delete(id: string): Promise<void> {
    await DELETE.run(this.#redis, [this.#key(id), this.#index], [id], this.#timeout);
  }

  /**
   * How many live sessions the store holds, over every instance.
   *
   * @returns The count.
   *
   * @example
   * ```ts ignore
   * import { openRedis, RedisSessionStore } from "@anubis/redis";
   * import assert from "node:assert/strict";
   * const redis = await openRedis("redis://127.0.0.1:6379");
   * assert.equal(typeof await new RedisSessionStore(redis).count(), "number");
   * redis.close();
   * ```
   */
  async count(): Promise<number> {
    const now = String(Date.now());
    const live = await command(
      this.#redis,
      ["ZCOUNT", this.#index, `(${now}`, "+inf"],
      this.#timeout,
    );
    return Number(live);
  }

  /**
   * Every live record, found with `SCAN` (in no set order): what a change
   * raised on one instance must reach, wherever each session's stream
   * lives. A record deleted or rewritten while the scan runs is skipped or
   * read as it is; one saved meanwhile may be missed.
   *
   * @returns The records.
   *
   * @example
   * ```ts ignore
   * import { openRedis, RedisSessionStore } from "@anubis/redis";
   * import assert from "node:assert/strict";
   * const redis = await openRedis("redis://127.0.0.1:6379");
   * const ids = [];
   * for await (const record of new RedisSessionStore(redis).records()) ids.push(record.id);
   * assert.ok(Array.isArray(ids));
   * redis.close();
   * ```
   */
  async *records(): AsyncIterable<SessionRecord> {
    const match = `${globEscape(this.#prefix)}s:*`;
    const seen = new Set<string>(); // SCAN may return a key twice
    let cursor = "0";
    do {
      const [next, keys] = await command<[string, string[]]>(
        this.#redis,
        ["SCAN", cursor, "MATCH", match, "COUNT", "500"],
        this.#timeout,
      );
      cursor = next;
      const fresh = keys.filter((key) => !seen.has(key));
      if (fresh.length === 0) continue;
      for (const key of fresh) seen.add(key);
      const values = await command<(string | null)[]>(
        this.#redis,
        ["MGET", ...fresh],
        this.#timeout,
      );
      for (const json of values) {
        if (typeof json !== "string") continue; // expired or deleted since the scan
        try {
          yield JSON.parse(json) as SessionRecord;
        } catch {
          // not a record of this store
        }
      }
    } while (cursor !== "0");
  }

  #key(id: string): string {
    return `${this.#prefix}s:${id}`;
  }
}
