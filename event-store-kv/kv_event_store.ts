/**
 * A Deno KV `EventStore`: events survive restarts and are shared by every
 * process that opens the same database.
 *
 * @module
 */

import type { EventStore, StoredEvent } from "@anubis/core";
import {
  backoff,
  chunkWrites,
  joinBytes,
  type KvAtomic,
  type KvKey,
  type KvKeyPart,
  type KvLike,
  type KvU64Like,
  MAX_PARTS_PER_COMMIT,
  readChunked,
  readHead,
  retryLocked,
} from "@anubis/core/kv";
import { KeyedQueue } from "./_keyed_queue.ts";
import { Wakeups } from "./_wakeups.ts";

/**
 * Options of a {@link KvEventStore}.
 *
 * @example
 * ```ts
 * import type { KvEventStoreOptions } from "@anubis/event-store-kv";
 * const options: KvEventStoreOptions = { maxEventsPerSession: 500, ttlMs: 15 * 60_000 };
 * ```
 */
export interface KvEventStoreOptions {
  /** Key prefix of everything the store writes (default `["anubis", "events"]`). */
  prefix?: readonly KvKeyPart[];
  /** Events kept per session; older ones are hidden at once and deleted in batches (default 1,000). */
  maxEventsPerSession?: number;
  /** Age after which an event is no longer replayed, in ms (default one hour). */
  ttlMs?: number;
  /**
   * How long a session's id counter outlives its last append, and the last
   * time a tail followed it, in ms (default `ttlMs` + {@link COUNTER_GRACE_MS}).
   * A counter that expired starts again at 1, so it must outlast every id a
   * client may still resume from. `Infinity`: it never expires.
   */
  counterTtlMs?: number;
  /**
   * Starts a missing counter from the clock (ms since the epoch × 1,000)
   * instead of from 1 (default `false`), so ids never go back even after the
   * counter was deleted. Not for sessions: their first id must be 1.
   */
  restartIdsFromClock?: boolean;
  /** How often `tail()` polls for other processes' appends, in ms (default 100). */
  pollIntervalMs?: number;
  /**
   * Also wake tails with `kv.watch()` (default `false`). Worth it on KV
   * Connect backends (self-hosted denokv), where `watch` sees other
   * instances' writes; on a local file it never fires across processes.
   */
  watch?: boolean;
  /** How long to retry "database is locked" and lost races before failing, in ms (default 10,000). */
  retryTimeoutMs?: number;
  /** Close the database in `close()` (default `false`: the caller owns it). */
  closeKv?: boolean;
  /** The clock, in ms (default `Date.now`). */
  now?: () => number;
}

/** A session's last id and the versionstamp to check it against (`null`: no counter key). */
interface Counter {
  id: number;
  versionstamp: string | null;
  /** Stored as decimal digits (one release wrote them) rather than a `KvU64`. */
  digits?: boolean;
}

/** What the head of an event records besides its bytes. */
interface EventHeader {
  /** When it was appended (ms since the epoch). */
  at: number;
  /** Where the bytes are when they were too big for the append's commit. */
  blob?: string;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
/** Appends between two physical trims of events past `maxEventsPerSession`. */
const TRIM_EVERY = 64;
/** Mutations per delete commit (KV allows 1,000). */
const DELETE_BATCH = 500;
/** Counter versionstamps kept to skip a read when this process appended last. */
const CACHED_COUNTERS = 1_024;

/**
 * How much longer than `ttlMs` a session's id counter lives by default after
 * its last append (or the last time a tail followed it), in ms: one day. Ids
 * begin again at 1 only once a counter expired, so it outlasts every event
 * (KV keeps an expired key readable for up to a minute) and any session a
 * client could still resume: the HTTP transport ends a session idle for
 * `sessionIdleMs` (30 minutes by default), and a tail, which is what holds a
 * session's stream open, refreshes the counter while it runs. A session whose
 * client vanished leaves its counter behind for this long, no longer.
 *
 * @example
 * ```ts
 * import { COUNTER_GRACE_MS } from "@anubis/event-store-kv";
 * import assert from "node:assert/strict";
 * assert.equal(COUNTER_GRACE_MS / 3_600_000, 24);
 * ```
 */
export const COUNTER_GRACE_MS = 24 * 60 * 60_000;

/**
 * A counter as stored: a `KvU64`, which every release reads and older ones
 * add to with `sum`, or its decimal digits as UTF-8, as one release wrote it.
 */
type CounterValue = KvU64Like | Uint8Array;

/** The `KvU64` class of the database's library (Deno's, or `npm:@deno/kv`'s). */
type KvU64Class = new (value: bigint) => KvU64Like;

/** Deno's `KvU64` on Deno; on Node, a store learns `@deno/kv`'s from the first counter it reads. */
const DENO_KV_U64 = (globalThis as { Deno?: { KvU64?: KvU64Class } }).Deno?.KvU64;

function positive(name: string, value: number): number {
  if (!(value > 0) || !Number.isFinite(value)) {
    throw new RangeError(`${name} must be a positive number, got ${value}`);
  }
  return value;
}

/**
 * The `EventStore` of `@anubis/core` on Deno KV (a `Deno.Kv`, or a `Kv` from
 * `npm:@deno/kv` on Node).
 *
 * - Keys: `[...prefix, sessionId, "id"]` holds the session's last id (a
 *   `KvU64`), `[...prefix, sessionId, "ev", id]` an event, with its parts at
 *   `[..., id, 1]`… when it is over 60 KiB, and `[...prefix, sessionId,
 *   "blob", uuid, …]` events too big for one commit. The session id is a key
 *   part of its own, so no session can reach another's keys.
 * - Ids: the counter is read, then the new event and the incremented counter
 *   are committed together under a versionstamp check; a lost race or
 *   "database is locked" is retried. Processes sharing one database get every
 *   id once, with no gap. A missing counter starts above the highest event id
 *   KV still holds, so ids never repeat or go back under stored events.
 * - Values are `Uint8Array` (UTF-8 text behind a small JSON header), readable
 *   by Deno and Node alike.
 * - Retention: at most `maxEventsPerSession` newest events and none older than
 *   `ttlMs`, both checked on read (KV's `expireIn` is only the earliest time a
 *   key may vanish); the rest is deleted in batches and by `expireIn`. The
 *   counter expires {@link COUNTER_GRACE_MS} after the session's last event
 *   would (a running tail keeps it alive), so a session whose client vanished
 *   without a `DELETE` leaves no key behind, and ids begin again at 1 only
 *   long after any client could resume from an earlier one.
 *
 * @example
 * ```ts
 * import { KvEventStore } from "@anubis/event-store-kv";
 * import assert from "node:assert/strict";
 * const kv = await Deno.openKv(":memory:");
 * const store = new KvEventStore(kv);
 * await store.append("session-a", "first");
 * await store.append("session-a", "second");
 * assert.deepEqual(await store.replay("session-a", 1), [ { id: 2, data: "second" } ]);
 * kv.close();
 * ```
 */
export class KvEventStore implements EventStore {
  /**
   * Other processes share the events: retention is the store's (see `EventStore.shared`).
   *
   * @example
   * ```ts
   * import { KvEventStore } from "@anubis/event-store-kv";
   * import assert from "node:assert/strict";
   * const kv = await Deno.openKv(":memory:");
   * assert.equal(new KvEventStore(kv).shared, true);
   * kv.close();
   * ```
   */
  readonly shared = true;
  readonly #kv: KvLike;
  readonly #prefix: readonly KvKeyPart[];
  readonly #maxPerSession: number;
  readonly #ttlMs: number;
  readonly #counterTtlMs: number;
  readonly #restartFromClock: boolean;
  readonly #pollMs: number;
  readonly #watch: boolean;
  readonly #retryMs: number;
  readonly #closeKv: boolean;
  readonly #now: () => number;
  readonly #appends = new KeyedQueue();
  readonly #wakeups = new Wakeups();
  /** The counter as this process last wrote it, per session. */
  readonly #counters = new Map<string, Counter>();
  /** How to make a `KvU64` for this database, once known. */
  #u64: KvU64Class | undefined = DENO_KV_U64;

  /**
   * Creates a store on `kv`.
   *
   * @param kv The database (the store does not close it unless `closeKv`).
   * @param options Retention, polling and retry settings.
   */
  constructor(kv: KvLike, options: KvEventStoreOptions = {}) {
    this.#kv = kv;
    this.#prefix = options.prefix ?? ["anubis", "events"];
    this.#maxPerSession = positive("maxEventsPerSession", options.maxEventsPerSession ?? 1_000);
    this.#ttlMs = positive("ttlMs", options.ttlMs ?? 3_600_000);
    const counterTtlMs = options.counterTtlMs ?? this.#ttlMs + COUNTER_GRACE_MS;
    this.#counterTtlMs = counterTtlMs === Infinity
      ? Infinity
      : positive("counterTtlMs", counterTtlMs);
    this.#restartFromClock = options.restartIdsFromClock ?? false;
    this.#pollMs = positive("pollIntervalMs", options.pollIntervalMs ?? 100);
    this.#watch = options.watch ?? false;
    this.#retryMs = positive("retryTimeoutMs", options.retryTimeoutMs ?? 10_000);
    this.#closeKv = options.closeKv ?? false;
    this.#now = options.now ?? Date.now;
  }

  /**
   * Records `data` as the session's next event.
   *
   * @param sessionId The session.
   * @param data The message text.
   * @returns The new id.
   *
   * @example
   * ```ts
   * import { KvEventStore } from "@anubis/event-store-kv";
   * import assert from "node:assert/strict";
   * const kv = await Deno.openKv(":memory:");
   * assert.equal(await new KvEventStore(kv).append("s", "hello"), 1);
   * kv.close();
   * ```
   */
  append(sessionId: string, data: string): Promise<number> {
    return this.#appends.run(sessionId, async () => {
      const at = this.#now();
      const bytes = encoder.encode(data);
      const header: EventHeader = { at };
      let writes = chunkWrites([], header, bytes);
      if (writes.length > MAX_PARTS_PER_COMMIT) {
        header.blob = crypto.randomUUID();
        await this.#writeBlob(sessionId, header.blob, bytes);
        writes = chunkWrites([], header, new Uint8Array());
      }
      const id = await this.#commitNext(sessionId, (op, id) => {
        for (const w of writes) {
          op.set([...this.#eventKey(sessionId, id), ...w.key], w.value, { expireIn: this.#ttlMs });
        }
      });
      if (id > this.#maxPerSession && id % TRIM_EVERY === 0) {
        await this.#trim(sessionId, id - this.#maxPerSession);
      }
      this.#wakeups.wake(sessionId);
      return id;
    });
  }

  /**
   * The retained events after `afterId`, in id order.
   *
   * @param sessionId The session.
   * @param afterId The last id the client saw.
   * @returns The events.
   *
   * @example
   * ```ts
   * import { KvEventStore } from "@anubis/event-store-kv";
   * import assert from "node:assert/strict";
   * const kv = await Deno.openKv(":memory:");
   * const store = new KvEventStore(kv);
   * await store.append("s", "a");
   * assert.deepEqual(await store.replay("s", 0), [ { id: 1, data: "a" } ]);
   * kv.close();
   * ```
   */
  replay(sessionId: string, afterId: number): Promise<StoredEvent[]> {
    return retryLocked(() => this.#replayOnce(sessionId, afterId), this.#retryMs);
  }

  async #replayOnce(sessionId: string, afterId: number): Promise<StoredEvent[]> {
    const latest = await this.latestId(sessionId);
    const after = Number.isFinite(afterId) ? Math.floor(afterId) : 0;
    const from = Math.max(after, latest - this.#maxPerSession, 0) + 1;
    if (from > latest) return [];
    const prefix = this.#eventsPrefix(sessionId);
    const oldest = this.#now() - this.#ttlMs;
    const events: StoredEvent[] = [];
    let pending: { id: number; header: EventHeader; parts: Uint8Array[]; count: number } | null =
      null;
    const finish = async () => {
      if (!pending || pending.header.at <= oldest) return;
      const bytes = pending.header.blob
        ? (await readChunked(this.#kv, this.#blobKey(sessionId, pending.header.blob)))?.bytes
        : pending.parts.length === pending.count
        ? joinBytes(pending.parts)
        : undefined; // a part was deleted under us: the event is gone
      if (bytes) events.push({ id: pending.id, data: decoder.decode(bytes) });
    };
    const entries = this.#kv.list<Uint8Array>({ prefix, start: [...prefix, BigInt(from)] });
    for await (const entry of entries) {
      if (entry.key.length === prefix.length + 1) {
        await finish();
        const { header, first } = readHead<EventHeader>(entry.value);
        pending = {
          id: Number(entry.key[prefix.length]),
          header,
          parts: [first],
          count: header.parts,
        };
      } else if (pending && entry.key[prefix.length] === BigInt(pending.id)) {
        pending.parts.push(entry.value);
      }
    }
    await finish();
    return events;
  }

  /**
   * The highest id given to the session, or 0.
   *
   * @param sessionId The session.
   * @returns The id.
   *
   * @example
   * ```ts
   * import { KvEventStore } from "@anubis/event-store-kv";
   * import assert from "node:assert/strict";
   * const kv = await Deno.openKv(":memory:");
   * assert.equal(await new KvEventStore(kv).latestId("s"), 0);
   * kv.close();
   * ```
   */
  async latestId(sessionId: string): Promise<number> {
    return (await this.#getCounter(sessionId)).id;
  }

  /**
   * Records that the instance `owner` is alive: one key per owner,
   * `[...prefix, false, owner]` (a boolean part, so no session id can reach
   * it), rewritten at each beat and kept for `ttlMs`.
   *
   * @param owner The instance's id.
   *
   * @example
   * ```ts
   * import { KvEventStore } from "@anubis/event-store-kv";
   * import assert from "node:assert/strict";
   * const kv = await Deno.openKv(":memory:");
   * const store = new KvEventStore(kv);
   * await store.heartbeat("a");
   * const first = await store.lastHeartbeat("a");
   * await store.heartbeat("a");
   * assert.notEqual(await store.lastHeartbeat("a"), first);
   * kv.close();
   * ```
   */
  async heartbeat(owner: string): Promise<void> {
    const op = this.#kv.atomic().set(this.#ownerKey(owner), this.#now(), { expireIn: this.#ttlMs });
    await retryLocked(() => op.commit(), this.#retryMs);
  }

  /**
   * The versionstamp of `owner`'s last {@link heartbeat} (it changes with
   * every beat, whichever process reads it), or `undefined`.
   *
   * @param owner The instance's id.
   * @returns The token.
   *
   * @example
   * ```ts
   * import { KvEventStore } from "@anubis/event-store-kv";
   * import assert from "node:assert/strict";
   * const kv = await Deno.openKv(":memory:");
   * const store = new KvEventStore(kv);
   * assert.equal(await store.lastHeartbeat("a"), undefined);
   * await store.heartbeat("a");
   * assert.equal(typeof await store.lastHeartbeat("a"), "string");
   * kv.close();
   * ```
   */
  async lastHeartbeat(owner: string): Promise<string | undefined> {
    const entry = await retryLocked(() => this.#kv.get(this.#ownerKey(owner)), this.#retryMs);
    return entry.versionstamp ?? undefined;
  }

  /**
   * Removes every key of the session (the counter last, so a delete cut short
   * never lets ids restart under surviving events). Idempotent.
   *
   * @param sessionId The session.
   *
   * @example
   * ```ts
   * import { KvEventStore } from "@anubis/event-store-kv";
   * import assert from "node:assert/strict";
   * const kv = await Deno.openKv(":memory:");
   * const store = new KvEventStore(kv);
   * await store.append("s", "a");
   * await store.delete("s");
   * assert.equal(await store.latestId("s"), 0);
   * kv.close();
   * ```
   */
  async delete(sessionId: string): Promise<void> {
    await this.#appends.run(sessionId, async () => {
      const counter = this.#counterKey(sessionId);
      const keys: KvKey[] = [];
      for await (const entry of this.#kv.list({ prefix: this.#sessionPrefix(sessionId) })) {
        if (entry.key.length !== counter.length || entry.key.at(-1) !== "id") {
          keys.push(entry.key as KvKey);
        }
      }
      await this.#deleteKeys([...keys, counter]);
      this.#counters.delete(sessionId);
    });
    this.#wakeups.wake(sessionId);
  }

  /**
   * Yields the retained events after `afterId`, then every event any process
   * appends, until `signal` aborts or the session is deleted. Appends through
   * this store instance arrive at once; other processes' appends within
   * `pollIntervalMs` (plus one read), or at once with `watch` on a backend
   * whose `watch` crosses instances.
   *
   * @param sessionId The session.
   * @param afterId Yield only events after this id.
   * @param signal Stops the tail.
   * @returns The events.
   *
   * @example
   * ```ts
   * import { KvEventStore } from "@anubis/event-store-kv";
   * import assert from "node:assert/strict";
   * const kv = await Deno.openKv(":memory:");
   * const store = new KvEventStore(kv);
   * const stop = new AbortController();
   * setTimeout(() => store.append("s", "live"), 10);
   * for await (const event of store.tail("s", 0, stop.signal)) {
   *   assert.deepEqual(event, { id: 1, data: "live" });
   *   stop.abort();
   * }
   * kv.close();
   * ```
   */
  async *tail(sessionId: string, afterId: number, signal: AbortSignal): AsyncIterable<StoredEvent> {
    let cursor = afterId;
    let highest = 0;
    let keepAt = this.#now(); // a follower keeps the counter alive: at once, then every quarter of its life
    const watcher = this.#watchCounter(sessionId, signal);
    try {
      while (!signal.aborted) {
        let kept: Counter | undefined;
        if (this.#now() >= keepAt) {
          kept = await this.#keepCounter(sessionId);
          keepAt = this.#now() + this.#counterTtlMs / 4;
        }
        const latest = kept ? kept.id : await this.latestId(sessionId);
        if (latest < highest) return; // deleted (and perhaps begun again) since the tail began
        highest = latest;
        if (latest > cursor) {
          const events = await this.replay(sessionId, cursor);
          for (const event of events) {
            if (signal.aborted) return;
            cursor = event.id;
            yield event;
          }
          if (events.length === 0) cursor = latest; // all of them aged out
          continue;
        }
        await this.#wakeups.wait(sessionId, this.#pollMs, signal);
      }
    } finally {
      watcher?.cancel().catch(() => {});
    }
  }

  /**
   * Closes the database if the store was made with `closeKv`.
   *
   * @example
   * ```ts
   * import { KvEventStore } from "@anubis/event-store-kv";
   * const store = new KvEventStore(await Deno.openKv(":memory:"), { closeKv: true });
   * store.close();
   * ```
   */
  close(): void {
    if (this.#closeKv) this.#kv.close();
  }

  /** Allocates the next id and commits it with `write`'s mutations. */
  async #commitNext(sessionId: string, write: (op: KvAtomic, id: number) => void): Promise<number> {
    const key = this.#counterKey(sessionId);
    const deadline = Date.now() + this.#retryMs;
    for (let attempt = 0;; attempt++) {
      let current = this.#counters.get(sessionId);
      if (!current || attempt > 0) current = await this.#readCounter(sessionId);
      const id = current.id + 1;
      const op = this.#kv.atomic().check({ key, versionstamp: current.versionstamp });
      // Refreshed on every append, like the events, but outliving them.
      const expiryLeft = this.#writeCounter(op, key, current, id);
      write(op, id);
      const result = await retryLocked(() => op.commit(), this.#retryMs);
      if (result.ok) {
        this.#remember(sessionId, {
          id,
          versionstamp: result.versionstamp,
          digits: current.digits,
        });
        if (expiryLeft) await this.#keepCounter(sessionId);
        return id;
      }
      if (Date.now() >= deadline) {
        throw new Error(`Could not append to session ${sessionId}: lost every race for an id`);
      }
      await backoff(attempt);
    }
  }

  /**
   * The session's counter. A missing one (new, deleted, or expired) goes on
   * from the highest event id KV still holds, which is 0 unless KV has not
   * yet collected expired events: a new id then never lands on an old
   * event's key nor sorts below it. With `restartIdsFromClock` it goes on from
   * the clock if that is higher, so it also passes every id given before.
   */
  async #readCounter(sessionId: string): Promise<Counter> {
    const counter = await this.#getCounter(sessionId);
    if (counter.versionstamp !== null) return counter;
    const prefix = this.#eventsPrefix(sessionId);
    const last = await retryLocked(async () => {
      for await (const e of this.#kv.list({ prefix }, { reverse: true, limit: 1 })) return e.key;
    }, this.#retryMs);
    const stored = last ? Number(last[prefix.length]) : 0;
    const base = this.#restartFromClock ? Math.floor(this.#now()) * 1_000 : 0;
    return { id: Math.max(stored, base), versionstamp: null };
  }

  /** The counter key as stored (`{ id: 0, versionstamp: null }` when missing). */
  async #getCounter(sessionId: string): Promise<Counter> {
    const key = this.#counterKey(sessionId);
    return this.#counterOf(await retryLocked(() => this.#kv.get<CounterValue>(key), this.#retryMs));
  }

  /** A counter as read (learning the database's `KvU64` class from it). */
  #counterOf(entry: { value: CounterValue | null; versionstamp: string | null }): Counter {
    const { value, versionstamp } = entry;
    if (value === null) return { id: 0, versionstamp: null };
    if (value instanceof Uint8Array) {
      return { id: Number(decoder.decode(value)), versionstamp, digits: true };
    }
    this.#u64 ??= value.constructor as KvU64Class;
    return { id: Number(value.value), versionstamp };
  }

  /**
   * Sets the counter from `from` to `id` in `op`: a `KvU64` with its expiry
   * (digits stay digits until a `KvU64` can be made). Until this store knows
   * the database's `KvU64` class (on Node, before it read a counter), it adds
   * with `sum`, which takes no expiry, and returns `true`: the caller then
   * gives the counter its expiry with {@link #keepCounter}.
   */
  #writeCounter(op: KvAtomic, key: KvKey, from: Counter, id: number): boolean {
    if (this.#u64) op.set(key, new this.#u64(BigInt(id)), this.#counterExpiry());
    else if (from.digits) op.set(key, encoder.encode(String(id)), this.#counterExpiry());
    else {
      op.sum(key, BigInt(from.versionstamp === null ? id : id - from.id));
      return this.#counterTtlMs !== Infinity;
    }
    return false;
  }

  /** The `set` options of a counter: its expiry, unless it never expires. */
  #counterExpiry(): { expireIn: number } | undefined {
    return this.#counterTtlMs === Infinity ? undefined : { expireIn: this.#counterTtlMs };
  }

  /**
   * Pushes the counter's expiry on, as an append would, unless it never
   * expires or is missing. Best effort: a lost race means an append just did.
   *
   * @returns The counter as of the renewal (its commit checked it was still
   * current; a missing counter as read), so a tail need not read it again;
   * `undefined` when it never expires (not read) or the race was lost (stale).
   */
  async #keepCounter(sessionId: string): Promise<Counter | undefined> {
    if (this.#counterTtlMs === Infinity) return undefined;
    const key = this.#counterKey(sessionId);
    const counter = await this.#getCounter(sessionId);
    if (counter.versionstamp === null) return counter;
    const result = await retryLocked(() => {
      const op = this.#kv.atomic().check({ key, versionstamp: counter.versionstamp });
      this.#writeCounter(op, key, counter, counter.id);
      return op.commit();
    }, this.#retryMs);
    if (!result.ok) return undefined;
    const kept = { ...counter, versionstamp: result.versionstamp };
    this.#remember(sessionId, kept);
    return kept;
  }

  #remember(sessionId: string, counter: Counter): void {
    this.#counters.delete(sessionId);
    this.#counters.set(sessionId, counter);
    if (this.#counters.size > CACHED_COUNTERS) {
      this.#counters.delete(this.#counters.keys().next().value!);
    }
  }

  /** Stores bytes too big for one commit under a fresh blob key, head last. */
  async #writeBlob(sessionId: string, blob: string, bytes: Uint8Array): Promise<void> {
    const writes = chunkWrites(this.#blobKey(sessionId, blob), {}, bytes);
    const batches = [];
    for (let i = 1; i < writes.length; i += MAX_PARTS_PER_COMMIT) {
      batches.push(writes.slice(i, i + MAX_PARTS_PER_COMMIT));
    }
    batches.push([writes[0]]);
    for (const batch of batches) {
      await retryLocked(async () => {
        const op = this.#kv.atomic();
        for (const w of batch) op.set(w.key, w.value, { expireIn: this.#ttlMs });
        const result = await op.commit();
        if (!result.ok) throw new Error("Blob write without checks failed");
      }, this.#retryMs);
    }
  }

  /** Deletes events up to and including `lastId` (with their parts and blobs). */
  async #trim(sessionId: string, lastId: number): Promise<void> {
    const prefix = this.#eventsPrefix(sessionId);
    const keys: KvKey[] = [];
    const end = [...prefix, BigInt(lastId + 1)];
    for await (const entry of this.#kv.list<Uint8Array>({ prefix, end })) {
      keys.push(entry.key as KvKey);
      if (entry.key.length !== prefix.length + 1) continue;
      const blob = readHead<EventHeader>(entry.value).header.blob;
      if (!blob) continue;
      for await (const part of this.#kv.list({ prefix: this.#blobKey(sessionId, blob) })) {
        keys.push(part.key as KvKey);
      }
      keys.push(this.#blobKey(sessionId, blob));
    }
    await this.#deleteKeys(keys);
  }

  async #deleteKeys(keys: KvKey[]): Promise<void> {
    for (let i = 0; i < keys.length; i += DELETE_BATCH) {
      await retryLocked(async () => {
        const op = this.#kv.atomic();
        for (const key of keys.slice(i, i + DELETE_BATCH)) op.delete(key);
        await op.commit();
      }, this.#retryMs);
    }
  }

  /** With `watch`, wakes the session's tails whenever its counter changes. */
  #watchCounter(sessionId: string, signal: AbortSignal): ReadableStreamDefaultReader | undefined {
    if (!this.#watch || !this.#kv.watch) return undefined;
    const reader = this.#kv.watch([this.#counterKey(sessionId)]).getReader();
    (async () => {
      while (!signal.aborted) {
        const { done } = await reader.read();
        if (done) return;
        this.#wakeups.wake(sessionId);
      }
    })().catch(() => {}); // a failed watch leaves the poll in charge
    return reader;
  }

  #sessionPrefix(sessionId: string): KvKey {
    return [...this.#prefix, sessionId];
  }
  #ownerKey(owner: string): KvKey {
    return [...this.#prefix, false, owner];
  }
  #counterKey(sessionId: string): KvKey {
    return [...this.#prefix, sessionId, "id"];
  }
  #eventsPrefix(sessionId: string): KvKey {
    return [...this.#prefix, sessionId, "ev"];
  }
  #eventKey(sessionId: string, id: number): KvKey {
    return [...this.#prefix, sessionId, "ev", BigInt(id)];
  }
  #blobKey(sessionId: string, blob: string): KvKey {
    return [...this.#prefix, sessionId, "blob", blob];
  }
}
