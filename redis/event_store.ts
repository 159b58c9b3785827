/**
 * A Redis `EventStore`: resumable streams shared by every instance that
 * connects to the same Redis, with atomic per-session ids, bounded retention
 * and a live tail woken by pub/sub.
 *
 * @module
 */

import { type EventStore, logger, type StoredEvent } from "@anubis/core";
import type { RedisConnection } from "./connection.ts";
import { clientOf, type RawRedisClient } from "./_client.ts";
import { command, LuaScript } from "./_commands.ts";
import { Wakeups } from "./_wakeups.ts";

/**
 * Options of a {@link RedisEventStore}.
 *
 * @example
 * ```ts
 * import type { RedisEventStoreOptions } from "@anubis/redis";
 * import assert from "node:assert/strict";
 * const options: RedisEventStoreOptions = { maxEventsPerSession: 500, ttlMs: 15 * 60_000 };
 * assert.equal(options.maxEventsPerSession, 500);
 * ```
 */
export interface RedisEventStoreOptions {
  /** Prefix of every key and channel the store uses (default `"anubis:events"`). */
  prefix?: string;
  /** Events kept per session; older ones are dropped by the append that passes it (default 1,000). */
  maxEventsPerSession?: number;
  /** Bytes of event data kept per session; the oldest events go first (default 16 MiB). */
  maxBytesPerSession?: number;
  /** The largest event accepted, in bytes; a larger append rejects (default 4 MiB). */
  maxEventBytes?: number;
  /** Age after which an event is no longer replayed, in ms (default one hour). */
  ttlMs?: number;
  /**
   * How long a session's id counter outlives its last append (or the last
   * time a tail followed it), in ms (default `ttlMs` + one day; at least
   * `ttlMs`). `Infinity`: never (a channel that lives as long as the server).
   */
  counterTtlMs?: number;
  /** The slow poll of `tail()`, a safety net behind pub/sub wake-ups, in ms (default 1,000). */
  pollIntervalMs?: number;
  /** How long one command may take before it rejects (Redis down or slow), in ms (default 5,000). */
  commandTimeoutMs?: number;
  /** The clock, in ms (default `Date.now`). */
  now?: () => number;
}

/** One day, in ms: how much longer than `ttlMs` a counter lives by default. */
const COUNTER_GRACE_MS = 24 * 60 * 60_000;

/**
 * KEYS: meta hash (n: last id, b: bytes appended since the last count),
 * stream. The stream trims itself to `maxEvents` (`XADD MAXLEN`); `b` only
 * grows, so when it passes `maxBytes` (rarely) the events are counted from
 * the newest and the oldest past the bound trimmed, and `b` set to what is
 * held.
 * ARGV: data, now (ms: the entry id is `<id>-<now>`), ttlMs, counterTtlMs (0: never expires), maxEvents,
 * maxBytes, wake channel.
 */
const APPEND = new LuaScript(`
local n = redis.call('HINCRBY', KEYS[1], 'n', 1)
if n == 1 then
  local last = redis.call('XREVRANGE', KEYS[2], '+', '-', 'COUNT', 1)[1]
  if last then
    local stored = tonumber(string.match(last[1], '^(%d+)'))
    if stored >= n then
      n = stored + 1
      redis.call('HSET', KEYS[1], 'n', n)
    end
  end
end
redis.call('XADD', KEYS[2], 'MAXLEN', ARGV[5], n .. '-' .. ARGV[2], 'd', ARGV[1])
local maxBytes = tonumber(ARGV[6])
if redis.call('HINCRBY', KEYS[1], 'b', string.len(ARGV[1])) > maxBytes then
  local entries = redis.call('XREVRANGE', KEYS[2], '+', '-')
  local kept = 0
  for i, entry in ipairs(entries) do
    local size = string.len(entry[2][2])
    if i > 1 and kept + size > maxBytes then
      redis.call('XTRIM', KEYS[2], 'MINID', entries[i - 1][1])
      break
    end
    kept = kept + size
  end
  redis.call('HSET', KEYS[1], 'b', kept)
end
redis.call('PEXPIRE', KEYS[2], ARGV[3])
if ARGV[4] == '0' then
  redis.call('PERSIST', KEYS[1])
else
  redis.call('PEXPIRE', KEYS[1], ARGV[4])
end
redis.call('PUBLISH', ARGV[7], n)
return n
`);

function positive(name: string, value: number): number {
  if (!(value > 0)) throw new RangeError(`${name} must be a positive number, got ${value}`);
  return value;
}

const encoder = new TextEncoder();

/**
 * The `EventStore` of `@anubis/core` on Redis.
 *
 * - Keys: per session, a hash `<prefix>:{<id>}:m` (its last id and the bytes
 *   it holds) and a stream `<prefix>:{<id>}:x` whose entry ids are the event
 *   ids and the time of the append (`<id>-<ms>`); the session id is URI-encoded inside the braces (one
 *   Redis Cluster slot per session), so no session reaches another's keys.
 * - Appends: one Lua script increments the counter, adds the event, trims the
 *   oldest past `maxEventsPerSession` or `maxBytesPerSession`, renews both
 *   expiries and publishes a wake-up on `<prefix>:{<id>}:w`: every instance
 *   gets every id once, with no gap, in one round trip. A missing counter
 *   goes on above the stream's last id, so ids never repeat under stored
 *   events.
 * - Retention: the count and byte bounds are exact (a replay after a trimmed
 *   id starts at the oldest event held: the gap in ids is visible); events
 *   older than `ttlMs` are not replayed; the stream expires `ttlMs` after the
 *   last append and the counter `counterTtlMs` after it (a tail renews it).
 * - Every command rejects after `commandTimeoutMs`, so a caller never waits
 *   for ever while Redis is down; the transport then fails closed.
 *
 * @example
 * ```ts ignore
 * import { openRedis, RedisEventStore } from "@anubis/redis";
 * import assert from "node:assert/strict";
 * const redis = await openRedis("redis://127.0.0.1:6379");
 * const store = new RedisEventStore(redis);
 * const first = await store.append("session-a", "first");
 * assert.deepEqual(await store.replay("session-a", first - 1), [{ id: first, data: "first" }]);
 * await store.close();
 * redis.close();
 * ```
 */
export class RedisEventStore implements EventStore {
  /**
   * Other instances share the events: retention is the store's (see `EventStore.shared`).
   *
   * @example
   * ```ts ignore
   * import { openRedis, RedisEventStore } from "@anubis/redis";
   * import assert from "node:assert/strict";
   * const redis = await openRedis("redis://127.0.0.1:6379");
   * assert.equal(new RedisEventStore(redis).shared, true);
   * redis.close();
   * ```
   */
  readonly shared = true;
  readonly #redis: RedisConnection;
  readonly #prefix: string;
  readonly #maxEvents: number;
  readonly #maxBytes: number;
  readonly #maxEventBytes: number;
  readonly #ttlMs: number;
  readonly #counterTtlMs: number;
  readonly #pollMs: number;
  readonly #timeoutMs: number;
  readonly #now: () => number;
  readonly #wakeups = new Wakeups();
  /** Tails per wake-up channel, and the subscriber connection they share. */
  readonly #channels = new Map<string, number>();
  #subscriber: Promise<RawRedisClient | undefined> | undefined;
  #subscriberConnection: RedisConnection | undefined;
  #closed = false;

  /**
   * Creates a store on `redis` (the caller closes the connection).
   *
   * @param redis The connection, from `openRedis`.
   * @param options Retention, bounds, polling and timeouts.
   */
  constructor(redis: RedisConnection, options: RedisEventStoreOptions = {}) {
    clientOf(redis); // a RedisConnection from openRedis, or a TypeError now
    this.#redis = redis;
    this.#prefix = options.prefix ?? "anubis:events";
    this.#maxEvents = positive("maxEventsPerSession", options.maxEventsPerSession ?? 1_000);
    this.#maxBytes = positive("maxBytesPerSession", options.maxBytesPerSession ?? 16 * 2 ** 20);
    this.#maxEventBytes = positive("maxEventBytes", options.maxEventBytes ?? 4 * 2 ** 20);
    this.#ttlMs = Math.ceil(positive("ttlMs", options.ttlMs ?? 3_600_000));
    const counterTtl = options.counterTtlMs ?? this.#ttlMs + COUNTER_GRACE_MS;
    this.#counterTtlMs = counterTtl === Infinity
      ? Infinity
      : Math.ceil(Math.max(positive("counterTtlMs", counterTtl), this.#ttlMs));
    this.#pollMs = positive("pollIntervalMs", options.pollIntervalMs ?? 1_000);
    this.#timeoutMs = positive("commandTimeoutMs", options.commandTimeoutMs ?? 5_000);
    this.#now = options.now ?? Date.now;
  }

  /**
   * Records `data` as the session's next event (one round trip).
   *
   * @param sessionId The session.
   * @param data The message text.
   * @returns The new id.
   * @throws {RangeError} When `data` is over `maxEventBytes`.
   *
   * @example
   * ```ts ignore
   * import { openRedis, RedisEventStore } from "@anubis/redis";
   * import assert from "node:assert/strict";
   * const redis = await openRedis("redis://127.0.0.1:6379");
   * const store = new RedisEventStore(redis);
   * assert.equal(await store.append("new-session", "hello"), 1);
   * await store.close();
   * redis.close();
   * ```
   */
  async append(sessionId: string, data: string): Promise<number> {
    // UTF-8 takes at most 3 bytes per UTF-16 unit: most events need no count.
    const size = data.length * 3 <= this.#maxEventBytes ? 0 : encoder.encode(data).length;
    if (size > this.#maxEventBytes) {
      throw new RangeError(`event of ${size} bytes is over maxEventBytes (${this.#maxEventBytes})`);
    }
    const keys = this.#keys(sessionId);
    const id = await APPEND.run<number>(this.#redis, [keys.meta, keys.stream], [
      data,
      String(Math.floor(this.#now())),
      String(this.#ttlMs),
      this.#counterTtlMs === Infinity ? "0" : String(this.#counterTtlMs),
      String(this.#maxEvents),
      String(this.#maxBytes),
      keys.wake,
    ], this.#timeoutMs);
    this.#wakeups.wake(keys.wake);
    return Number(id);
  }

  /**
   * The retained events after `afterId`, in id order.
   *
   * @param sessionId The session.
   * @param afterId The last id the client saw.
   * @returns The events.
   *
   * @example
   * ```ts ignore
   * import { openRedis, RedisEventStore } from "@anubis/redis";
   * import assert from "node:assert/strict";
   * const redis = await openRedis("redis://127.0.0.1:6379");
   * const store = new RedisEventStore(redis);
   * await store.append("s2", "a");
   * assert.deepEqual(await store.replay("s2", 0), [{ id: 1, data: "a" }]);
   * await store.close();
   * redis.close();
   * ```
   */
  async replay(sessionId: string, afterId: number): Promise<StoredEvent[]> {
    const after = Number.isFinite(afterId) && afterId > 0 ? Math.floor(afterId) : 0;
    const entries = await this.#run<[string, string[]][]>([
      "XRANGE",
      this.#keys(sessionId).stream,
      `${after + 1}-0`,
      "+",
    ]);
    const oldest = this.#now() - this.#ttlMs;
    const events: StoredEvent[] = [];
    for (const [entryId, fields] of entries ?? []) {
      // The entry id is `<event id>-<ms appended>`.
      const dash = entryId.indexOf("-");
      if (Number(entryId.slice(dash + 1)) <= oldest) continue;
      const data = fields[0] === "d" ? fields[1] : undefined;
      if (data !== undefined) events.push({ id: Number(entryId.slice(0, dash)), data });
    }
    return events;
  }

  /**
   * The highest id given to the session, or 0.
   *
   * @param sessionId The session.
   * @returns The id.
   *
   * @example
   * ```ts ignore
   * import { openRedis, RedisEventStore } from "@anubis/redis";
   * import assert from "node:assert/strict";
   * const redis = await openRedis("redis://127.0.0.1:6379");
   * const store = new RedisEventStore(redis);
   * assert.equal(await store.latestId("never-seen"), 0);
   * await store.close();
   * redis.close();
   * ```
   */
  async latestId(sessionId: string): Promise<number> {
    const value = await this.#run<string | null>(["HGET", this.#keys(sessionId).meta, "n"]);
    return value === null ? 0 : Number(value);
  }

  /**
   * Drops the session's events and counter in one command, and wakes its
   * tails (which then end). Idempotent; rejects when Redis did not confirm,
   * so the transport keeps the session for the client to retry.
   *
   * @param sessionId The session.
   *
   * @example
   * ```ts ignore
   * import { openRedis, RedisEventStore } from "@anubis/redis";
   * import assert from "node:assert/strict";
   * const redis = await openRedis("redis://127.0.0.1:6379");
   * const store = new RedisEventStore(redis);
   * await store.append("s3", "a");
   * await store.delete("s3");
   * assert.equal(await store.latestId("s3"), 0);
   * await store.close();
   * redis.close();
   * ```
   */
  async delete(sessionId: string): Promise<void> {
    const keys = this.#keys(sessionId);
    await this.#run(["DEL", keys.meta, keys.stream]);
    this.#run(["PUBLISH", keys.wake, "0"]).catch(() => {}); // tails notice at their next poll anyway
    this.#wakeups.wake(keys.wake);
  }

  /**
   * Records that instance `owner` is alive: a key set to a fresh random
   * token at each beat, kept for `ttlMs`.
   *
   * @param owner The instance's id.
   *
   * @example
   * ```ts ignore
   * import { openRedis, RedisEventStore } from "@anubis/redis";
   * import assert from "node:assert/strict";
   * const redis = await openRedis("redis://127.0.0.1:6379");
   * const store = new RedisEventStore(redis);
   * await store.heartbeat("instance-1");
   * assert.equal(typeof await store.lastHeartbeat("instance-1"), "string");
   * await store.close();
   * redis.close();
   * ```
   */
  async heartbeat(owner: string): Promise<void> {
    await this.#run(["SET", this.#ownerKey(owner), crypto.randomUUID(), "PX", String(this.#ttlMs)]);
  }

  /**
   * The token of `owner`'s last {@link heartbeat}, or `undefined`.
   *
   * @param owner The instance's id.
   * @returns The token.
   *
   * @example
   * ```ts ignore
   * import { openRedis, RedisEventStore } from "@anubis/redis";
   * import assert from "node:assert/strict";
   * const redis = await openRedis("redis://127.0.0.1:6379");
   * const store = new RedisEventStore(redis);
   * assert.equal(await store.lastHeartbeat("never-beat"), undefined);
   * await store.close();
   * redis.close();
   * ```
   */
  async lastHeartbeat(owner: string): Promise<string | undefined> {
    return (await this.#run<string | null>(["GET", this.#ownerKey(owner)])) ?? undefined;
  }

  /**
   * Yields the retained events after `afterId`, then every event any
   * instance appends, until `signal` aborts or the session is deleted.
   * Appends wake it through pub/sub at once; a slow poll
   * (`pollIntervalMs`) covers a wake-up lost while the subscriber
   * reconnected. While it runs it keeps the session's counter alive. A
   * command that fails (Redis down past `commandTimeoutMs`) ends it with
   * that error.
   *
   * @param sessionId The session.
   * @param afterId Yield only events after this id.
   * @param signal Stops the tail.
   * @returns The events.
   *
   * @example
   * ```ts ignore
   * import { openRedis, RedisEventStore } from "@anubis/redis";
   * import assert from "node:assert/strict";
   * const redis = await openRedis("redis://127.0.0.1:6379");
   * const store = new RedisEventStore(redis);
   * const stop = new AbortController();
   * setTimeout(() => store.append("s4", "live"), 10);
   * for await (const event of store.tail("s4", 0, stop.signal)) {
   *   assert.deepEqual(event, { id: 1, data: "live" });
   *   stop.abort();
   * }
   * await store.close();
   * redis.close();
   * ```
   */
  async *tail(sessionId: string, afterId: number, signal: AbortSignal): AsyncIterable<StoredEvent> {
    const keys = this.#keys(sessionId);
    const unwatch = this.#wakeups.watch(keys.wake);
    const unsubscribe = await this.#subscribe(keys.wake);
    let cursor = afterId;
    // A channel's counter never expires: one found below the cursor went back
    // (Redis lost its data), so the tail ends and its follower starts over.
    let highest = this.#counterTtlMs === Infinity ? Math.max(0, afterId) : 0;
    let keepAt = 0;
    try {
      while (!signal.aborted) {
        const generation = this.#wakeups.generation(keys.wake);
        if (this.#counterTtlMs !== Infinity && this.#now() >= keepAt) {
          await this.#run(["PEXPIRE", keys.meta, String(this.#counterTtlMs)]);
          keepAt = this.#now() + this.#counterTtlMs / 4;
        }
        const latest = await this.latestId(sessionId);
        if (latest < highest) return; // deleted (and perhaps begun again) since the tail began
        highest = latest;
        if (latest > cursor) {
          const events = await this.replay(sessionId, cursor);
          for (const event of events) {
            if (signal.aborted) return;
            cursor = event.id;
            yield event;
          }
          if (events.length === 0 || cursor < latest) cursor = Math.max(cursor, latest);
          continue;
        }
        await this.#wakeups.wait(keys.wake, generation, this.#pollMs, signal);
      }
    } finally {
      unwatch();
      unsubscribe();
    }
  }

  /**
   * Closes the store's pub/sub connection (the one it was given stays open:
   * its owner closes it). Tails still running go on by polling.
   *
   * @returns When closed.
   *
   * @example
   * ```ts ignore
   * import { openRedis, RedisEventStore } from "@anubis/redis";
   * import assert from "node:assert/strict";
   * const redis = await openRedis("redis://127.0.0.1:6379");
   * const store = new RedisEventStore(redis);
   * await store.close();
   * assert.equal(await redis.ping(), "PONG"); // the caller's connection stays open
   * redis.close();
   * ```
   */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#subscriber;
    this.#subscriberConnection?.close();
    this.#subscriberConnection = undefined;
  }

  #run<T>(args: string[]): Promise<T> {
    return command<T>(this.#redis, args, this.#timeoutMs);
  }

  /** Subscribes to a wake-up channel (shared by the tails on it); returns the unsubscribe. */
  async #subscribe(channel: string): Promise<() => void> {
    const subscriber = await this.#openSubscriber();
    if (!subscriber) return () => {};
    const count = this.#channels.get(channel) ?? 0;
    this.#channels.set(channel, count + 1);
    if (count === 0) {
      await subscriber.subscribe(channel, () => this.#wakeups.wake(channel)).catch((error) =>
        logger.warn("redis.subscribe", "pub/sub subscribe failed; the tail polls", { error })
      );
    }
    return () => {
      const left = (this.#channels.get(channel) ?? 1) - 1;
      if (left > 0) return void this.#channels.set(channel, left);
      this.#channels.delete(channel);
      if (subscriber.isOpen) subscriber.unsubscribe(channel).catch(() => {});
    };
  }

  /** The pub/sub connection, opened once; `undefined` (tails poll) when it cannot be. */
  #openSubscriber(): Promise<RawRedisClient | undefined> {
    if (this.#closed) return Promise.resolve(undefined);
    this.#subscriber ??= this.#redis.duplicate().then(
      (connection) => {
        if (this.#closed) {
          connection.close();
          return undefined;
        }
        this.#subscriberConnection = connection;
        return clientOf(connection);
      },
      (error) => {
        logger.warn("redis.subscribe", "no pub/sub connection; tails poll", { error });
        this.#subscriber = undefined; // try again with the next tail
        return undefined;
      },
    );
    return this.#subscriber;
  }

  #keys(sessionId: string): { meta: string; stream: string; wake: string } {
    const base = `${this.#prefix}:{${encodeURIComponent(sessionId)}}`;
    return { meta: `${base}:m`, stream: `${base}:x`, wake: `${base}:w` };
  }

  #ownerKey(owner: string): string {
    return `${this.#prefix}:o:${encodeURIComponent(owner)}`;
  }
}
