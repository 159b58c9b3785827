/**
 * A bounded in-process `EventStore`: resumable streams within one process.
 *
 * @module
 */

import type { EventStore, StoredEvent } from "@anubis/core";
import { Fifo } from "./_fifo.ts";

/**
 * Retention limits of a {@link MemoryEventStore}. The oldest events go first.
 *
 * @example
 * ```ts
 * import type { MemoryEventStoreOptions } from "@anubis/event-store-memory";
 * const options: MemoryEventStoreOptions = { maxEventsPerSession: 500, ttlMs: 10 * 60_000 };
 * ```
 */
export interface MemoryEventStoreOptions {
  /** Events kept per session (default 1,000). */
  maxEventsPerSession?: number;
  /** Events kept across all sessions (default 50,000). */
  maxEvents?: number;
  /**
   * Sessions whose id counter is remembered (default 10,000). Past it the
   * session appended to least recently is forgotten, and every session the
   * store creates afterwards continues above the highest id it ever gave a
   * forgotten session, so a returning client's cursor never runs ahead.
   */
  maxSessions?: number;
  /** Age after which an event is dropped, in milliseconds (default: no limit). */
  ttlMs?: number;
  /** The clock, in milliseconds (default `Date.now`); for tests. */
  now?: () => number;
}

interface HeldEvent extends StoredEvent {
  at: number;
}

interface SessionLog {
  events: Fifo<HeldEvent>;
  lastId: number;
}

/** Where an event sits, in the store-wide append order. */
interface EventRef {
  log: SessionLog;
  id: number;
  at: number;
}

/** Owners whose heartbeats are remembered (instances, not clients: a handful in practice). */
const MAX_OWNERS = 1_000;

const DEFAULTS = { maxEventsPerSession: 1_000, maxEvents: 50_000, maxSessions: 10_000 };

function positive(name: string, value: number | undefined, fallback?: number): number {
  const v = value ?? fallback;
  if (v === undefined) return Infinity;
  if (!(v > 0) || !Number.isSafeInteger(v)) {
    throw new RangeError(`${name} must be a positive integer, got ${value}`);
  }
  return v;
}

/**
 * Keeps each session's events in memory with bounded retention (per session,
 * in total, by age, and a bounded number of sessions), assigns ids from 1 per
 * session, and tails appends live within the process.
 *
 * A replay from before the oldest retained event returns what is still held;
 * the ids the caller did not get are the gap the transport reports.
 *
 * @example
 * ```ts
 * import { MemoryEventStore } from "@anubis/event-store-memory";
 * import assert from "node:assert/strict";
 * const store = new MemoryEventStore({ maxEventsPerSession: 2 });
 * await store.append("s", "a");
 * await store.append("s", "b");
 * await store.append("s", "c");
 * assert.deepEqual(await store.replay("s", 0), [ { id: 2, data: "b" }, { id: 3, data: "c" } ]);
 * ```
 */
export class MemoryEventStore implements EventStore {
  readonly #maxPerSession: number;
  readonly #maxEvents: number;
  readonly #maxSessions: number;
  readonly #ttlMs: number;
  readonly #now: () => number;
  /** Sessions in least-recently-appended-first order (re-inserted on append). */
  readonly #logs = new Map<string, SessionLog>();
  /** Every held event in append order, plus refs to events dropped since. */
  readonly #order = new Fifo<EventRef>();
  readonly #waiters = new Map<string, Set<() => void>>();
  /** Heartbeats per owner (instances in this process), the oldest owner forgotten past a bound. */
  readonly #beats = new Map<string, number>();
  #held = 0;
  #forgottenFloor = 0;

  /**
   * Creates an empty store.
   *
   * @param options Retention limits.
   */
  constructor(options: MemoryEventStoreOptions = {}) {
    this.#maxPerSession = positive(
      "maxEventsPerSession",
      options.maxEventsPerSession,
      DEFAULTS.maxEventsPerSession,
    );
    this.#maxEvents = positive("maxEvents", options.maxEvents, DEFAULTS.maxEvents);
    this.#maxSessions = positive("maxSessions", options.maxSessions, DEFAULTS.maxSessions);
    this.#ttlMs = positive("ttlMs", options.ttlMs);
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
   * import { MemoryEventStore } from "@anubis/event-store-memory";
   * import assert from "node:assert/strict";
   * const store = new MemoryEventStore();
   * assert.equal(await store.append("s", "hello"), 1);
   * ```
   */
  append(sessionId: string, data: string): Promise<number> {
    const now = this.#now();
    this.#expire(now);
    let log = this.#logs.get(sessionId);
    if (log) {
      this.#logs.delete(sessionId); // re-inserted below: most recently appended last
    } else {
      log = { events: new Fifo(), lastId: this.#forgottenFloor };
    }
    this.#logs.set(sessionId, log);
    const id = ++log.lastId;
    log.events.push({ id, data, at: now });
    this.#order.push({ log, id, at: now });
    this.#held++;
    while (log.events.length > this.#maxPerSession) this.#dropOldest(log);
    while (this.#held > this.#maxEvents) this.#dropOldestAnywhere();
    while (this.#logs.size > this.#maxSessions) this.#forgetLeastRecent();
    this.#compactOrder();
    this.#wake(sessionId);
    return Promise.resolve(id);
  }

  /**
   * The held events after `afterId`, in id order.
   *
   * @param sessionId The session.
   * @param afterId The last id the client saw.
   * @returns The events.
   *
   * @example
   * ```ts
   * import { MemoryEventStore } from "@anubis/event-store-memory";
   * import assert from "node:assert/strict";
   * const store = new MemoryEventStore();
   * await store.append("s", "a");
   * await store.append("s", "b");
   * assert.deepEqual(await store.replay("s", 1), [ { id: 2, data: "b" } ]);
   * ```
   */
  replay(sessionId: string, afterId: number): Promise<StoredEvent[]> {
    return Promise.resolve(this.#after(sessionId, afterId));
  }

  /**
   * The highest id given to the session, or 0.
   *
   * @param sessionId The session.
   * @returns The id.
   *
   * @example
   * ```ts
   * import { MemoryEventStore } from "@anubis/event-store-memory";
   * import assert from "node:assert/strict";
   * const store = new MemoryEventStore();
   * assert.equal(await store.latestId("s"), 0);
   * ```
   */
  latestId(sessionId: string): Promise<number> {
    return Promise.resolve(this.#logs.get(sessionId)?.lastId ?? 0);
  }

  /**
   * Records that the instance `owner` is alive (instances sharing this store
   * in one process tell a dead owner from a running one by it).
   *
   * @param owner The instance's id.
   *
   * @example
   * ```ts
   * import { MemoryEventStore } from "@anubis/event-store-memory";
   * import assert from "node:assert/strict";
   * const store = new MemoryEventStore();
   * assert.equal(await store.lastHeartbeat("a"), undefined);
   * await store.heartbeat("a");
   * const first = await store.lastHeartbeat("a");
   * await store.heartbeat("a");
   * assert.notEqual(await store.lastHeartbeat("a"), first);
   * ```
   */
  heartbeat(owner: string): Promise<void> {
    const beats = (this.#beats.get(owner) ?? 0) + 1;
    this.#beats.delete(owner); // re-inserted last: the Map's order is the beats' recency
    this.#beats.set(owner, beats);
    if (this.#beats.size > MAX_OWNERS) this.#beats.delete(this.#beats.keys().next().value!);
    return Promise.resolve();
  }

  /**
   * A token that changes with each {@link heartbeat} of `owner`, or
   * `undefined` when it never beat (or was forgotten).
   *
   * @param owner The instance's id.
   * @returns The token.
   *
   * @example
   * ```ts
   * import { MemoryEventStore } from "@anubis/event-store-memory";
   * import assert from "node:assert/strict";
   * const store = new MemoryEventStore();
   * await store.heartbeat("a");
   * assert.equal(await store.lastHeartbeat("a"), "1");
   * ```
   */
  lastHeartbeat(owner: string): Promise<string | undefined> {
    const beats = this.#beats.get(owner);
    return Promise.resolve(beats === undefined ? undefined : String(beats));
  }

  /**
   * Drops the session's events and counter, and ends its tails. Idempotent.
   *
   * @param sessionId The session.
   *
   * @example
   * ```ts
   * import { MemoryEventStore } from "@anubis/event-store-memory";
   * import assert from "node:assert/strict";
   * const store = new MemoryEventStore();
   * await store.append("s", "a");
   * await store.delete("s");
   * assert.equal(await store.latestId("s"), 0);
   * ```
   */
  delete(sessionId: string): Promise<void> {
    const log = this.#logs.get(sessionId);
    if (log) {
      this.#held -= log.events.length;
      log.events = new Fifo(); // refs in #order now point at nothing and are skipped
      this.#logs.delete(sessionId);
      this.#compactOrder();
    }
    this.#wake(sessionId);
    return Promise.resolve();
  }

  /**
   * Yields the held events after `afterId`, then each event as it is
   * appended, until `signal` aborts or the session is deleted. Events dropped
   * by retention before the tail reached them are skipped.
   *
   * @param sessionId The session.
   * @param afterId Yield only events after this id.
   * @param signal Stops the tail.
   * @returns The events.
   *
   * @example
   * ```ts
   * import { MemoryEventStore } from "@anubis/event-store-memory";
   * import assert from "node:assert/strict";
   * const store = new MemoryEventStore();
   * const stop = new AbortController();
   * setTimeout(() => store.append("s", "live"), 10);
   * for await (const event of store.tail("s", 0, stop.signal)) {
   *   assert.deepEqual(event, { id: 1, data: "live" });
   *   stop.abort();
   * }
   * ```
   */
  async *tail(sessionId: string, afterId: number, signal: AbortSignal): AsyncIterable<StoredEvent> {
    let cursor = afterId;
    let log = this.#logs.get(sessionId);
    while (!signal.aborted) {
      const current = this.#logs.get(sessionId);
      if (log && current !== log) return; // deleted or forgotten since the tail began
      log = current;
      const events = this.#after(sessionId, cursor);
      for (const event of events) {
        if (signal.aborted) return;
        cursor = event.id;
        yield event;
      }
      // No await between the empty read and registering the waiter: no append is missed.
      if (events.length === 0) await this.#nextAppend(sessionId, signal);
    }
  }

  #after(sessionId: string, afterId: number): StoredEvent[] {
    const log = this.#logs.get(sessionId);
    if (!log) return [];
    this.#expire(this.#now());
    const first = log.events.peek()?.id;
    if (first === undefined) return [];
    // Held ids are contiguous, so the first one after `afterId` is found by arithmetic.
    return log.events.slice(afterId + 1 - first).map(({ id, data }) => ({ id, data }));
  }

  #nextAppend(sessionId: string, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      let waiters = this.#waiters.get(sessionId);
      if (!waiters) this.#waiters.set(sessionId, waiters = new Set());
      const done = () => {
        waiters.delete(done);
        if (waiters.size === 0 && this.#waiters.get(sessionId) === waiters) {
          this.#waiters.delete(sessionId);
        }
        signal.removeEventListener("abort", done);
        resolve();
      };
      waiters.add(done);
      signal.addEventListener("abort", done, { once: true });
    });
  }

  #wake(sessionId: string): void {
    for (const done of [...this.#waiters.get(sessionId) ?? []]) done();
  }

  #dropOldest(log: SessionLog): void {
    if (log.events.shift()) this.#held--;
  }

  /** Drops the store-wide oldest held event, skipping refs to events already gone. */
  #dropOldestAnywhere(): void {
    for (let ref = this.#order.shift(); ref; ref = this.#order.shift()) {
      if (isHeld(ref)) {
        this.#dropOldest(ref.log);
        return;
      }
    }
  }

  #expire(now: number): void {
    if (this.#ttlMs === Infinity) return;
    const cutoff = now - this.#ttlMs;
    for (let ref = this.#order.peek(); ref && ref.at <= cutoff; ref = this.#order.peek()) {
      this.#order.shift();
      if (isHeld(ref)) this.#dropOldest(ref.log);
    }
  }

  #forgetLeastRecent(): void {
    const [sessionId, log] = this.#logs.entries().next().value!;
    this.#forgottenFloor = Math.max(this.#forgottenFloor, log.lastId);
    this.#held -= log.events.length;
    log.events = new Fifo();
    this.#logs.delete(sessionId);
    this.#wake(sessionId);
  }

  /** Keeps #order from growing past twice the held events with refs to dropped ones. */
  #compactOrder(): void {
    if (this.#order.length > 2 * this.#held + 64) this.#order.retain(isHeld);
  }
}

/** Whether the ref's event is still held (logs only ever drop from the front). */
function isHeld(ref: EventRef): boolean {
  const first = ref.log.events.peek()?.id;
  return first !== undefined && ref.id >= first;
}
