/**
 * One `requestState` signing key for every instance on a Redis, with no
 * configuration: created once, atomically, by whichever instance comes
 * first, read by every other, and rotated without breaking rounds in flight
 * (as `SharedRequestStateKeys` of `@anubis/core/kv` does on Deno KV).
 *
 * @module
 */

import { logger, type RequestStateCodec, type RequestStateKeys } from "@anubis/core";
import { PREVIOUS_SECRET_WINDOW_MS } from "@anubis/core/kv";
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

/** The record as stored (the same JSON as on KV). */
interface KeysRecord {
  v: 1;
  /** The signing secret, base64. */
  secret: string;
  createdAt: number;
  /** The secret it replaced, base64, and when. */
  previous?: { secret: string; retiredAt: number };
}

// KEYS: the record. ARGV: the value read ("" when none), the new value. 1 written, 0 changed meanwhile.
const REPLACE = new LuaScript(`
local current = redis.call('GET', KEYS[1]) or ''
if current ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
return 1`);

function toBase64(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

function fromBase64(text: string): Uint8Array {
  return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
}

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
  readonly #redis: RedisConnection;
  readonly #key: string;
  readonly #rotateAfterMs: number;
  readonly #windowMs: number;
  readonly #now: () => number;
  readonly #timeout: number;

  /**
   * Creates the keys' handle (nothing is read until {@link load}).
   *
   * @param redis The connection the instances share, from `openRedis`.
   * @param options Where, how often to rotate, and the command timeout.
   */
  constructor(redis: RedisConnection, options: RedisRequestStateKeysOptions = {}) {
    this.#redis = redis;
    this.#key = options.key ?? "anubis:request-state:keys";
    this.#rotateAfterMs = options.rotateAfterMs ?? 7 * 24 * 3_600_000;
    this.#windowMs = options.previousWindowMs ?? PREVIOUS_SECRET_WINDOW_MS;
    this.#now = options.now ?? Date.now;
    this.#timeout = commandTimeout(options.commandTimeoutMs);
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
  async load(): Promise<RequestStateKeys> {
    for (let attempt = 0;; attempt++) {
      const raw = await command(this.#redis, ["GET", this.#key], this.#timeout);
      const read = typeof raw === "string" ? raw : "";
      const record = read ? this.#parse(read) : undefined;
      if (record && this.#now() - record.createdAt < this.#rotateAfterMs) {
        return this.#keysOf(record);
      }
      const next: KeysRecord = {
        v: 1,
        secret: toBase64(crypto.getRandomValues(new Uint8Array(32))),
        createdAt: this.#now(),
      };
      if (record) next.previous = { secret: record.secret, retiredAt: this.#now() };
      const written = await REPLACE.run(
        this.#redis,
        [this.#key],
        [read, JSON.stringify(next)],
        this.#timeout,
      );
      if (written === 1) return this.#keysOf(next);
      // Another instance created or rotated it first: read what it wrote.
      if (attempt > 100) {
        throw new Error("Could not write the requestState keys: kept losing races");
      }
    }
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
  async rotate(): Promise<RequestStateKeys> {
    await this.load();
    return await new RedisRequestStateKeys(this.#redis, {
      key: this.#key,
      rotateAfterMs: 0,
      previousWindowMs: this.#windowMs,
      now: this.#now,
      commandTimeoutMs: this.#timeout,
    }).load();
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
  async attach(codec: RequestStateCodec, refreshMs = 60_000): Promise<() => void> {
    const reload = () => this.load();
    await codec.useKeys(await reload(), reload);
    const timer = setInterval(() => {
      reload().then((keys) => codec.useKeys(keys, reload)).catch((error) =>
        logger.error("store.failed", "refreshing the requestState keys from Redis failed", {
          error,
        })
      );
    }, refreshMs);
    return () => clearInterval(timer);
  }

  #parse(text: string): KeysRecord | undefined {
    try {
      const record = JSON.parse(text) as KeysRecord;
      return record?.v === 1 && typeof record.secret === "string" ? record : undefined;
    } catch {
      return undefined; // unreadable: replaced like a missing one
    }
  }

  #keysOf(record: KeysRecord): RequestStateKeys {
    const previous = record.previous;
    const live = previous && this.#now() - previous.retiredAt < this.#windowMs;
    return {
      secret: fromBase64(record.secret),
      previousSecrets: live ? [fromBase64(previous.secret)] : [],
    };
  }
}
