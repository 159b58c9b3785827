/**
 * The `EventStore` contract for Streamable HTTP resumability (seed 002).
 *
 * @module
 */

/**
 * One recorded event of a session's standalone stream.
 *
 * @example
 * ```ts
 * import type { StoredEvent } from "@anubis/core";
 * const event: StoredEvent = { id: 1, data: '{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}' };
 * ```
 */
export interface StoredEvent {
  /** The session-scoped, strictly increasing event id (the first is 1). */
  id: number;
  /**
   * What the transport recorded, opaque to the store: one JSON-RPC message as
   * JSON text (Streamable HTTP also records POST streams' messages, tagged
   * with their stream).
   */
  data: string;
}

/**
 * Records the messages sent on each session's standalone SSE stream (the one
 * opened with `GET`), and on its resumable POST streams, and replays them
 * after a `Last-Event-ID`. The data is opaque text to the store.
 *
 * - Ids are session-scoped and strictly increasing across reconnects; the store,
 *   not the connection, owns the counter, and the first id of a session is 1.
 * - A session's events are never visible to another session.
 * - Every method rejects when it cannot do its work; the transport then fails
 *   closed (an append that failed is never delivered, a failed `delete` on
 *   `DELETE` keeps the session so the client can retry).
 *
 * @example
 * ```ts
 * import type { EventStore, StoredEvent } from "@anubis/core";
 * import assert from "node:assert/strict";
 * class TinyStore implements EventStore {
 *   #events = new Map<string, StoredEvent[]>();
 *   append(sessionId: string, data: string): Promise<number> {
 *     const list = this.#events.get(sessionId) ?? [];
 *     const id = (list.at(-1)?.id ?? 0) + 1;
 *     list.push({ id, data });
 *     this.#events.set(sessionId, list);
 *     return Promise.resolve(id);
 *   }
 *   replay(sessionId: string, afterId: number): Promise<StoredEvent[]> {
 *     return Promise.resolve((this.#events.get(sessionId) ?? []).filter((e) => e.id > afterId));
 *   }
 *   latestId(sessionId: string): Promise<number> {
 *     return Promise.resolve(this.#events.get(sessionId)?.at(-1)?.id ?? 0);
 *   }
 *   delete(sessionId: string): Promise<void> {
 *     this.#events.delete(sessionId);
 *     return Promise.resolve();
 *   }
 * }
 * const store = new TinyStore();
 * assert.equal(await store.append("s", "x"), 1);
 * ```
 */
export interface EventStore {
  /**
   * Records `data` as the next event of the session and returns its id.
   *
   * @param sessionId The session.
   * @param data The message text.
   * @returns The new event id.
   */
  append(sessionId: string, data: string): Promise<number>;
  /**
   * The events recorded after `afterId`, in ascending id order. A store with
   * bounded retention returns only what it still holds.
   *
   * @param sessionId The session.
   * @param afterId The last id the client saw (0 for everything).
   * @returns The events.
   */
  replay(sessionId: string, afterId: number): Promise<StoredEvent[]>;
  /**
   * The highest id assigned to the session so far, or 0.
   *
   * @param sessionId The session.
   * @returns The id.
   */
  latestId(sessionId: string): Promise<number>;
  /**
   * Drops every event of the session. Idempotent.
   *
   * @param sessionId The session.
   */
  delete(sessionId: string): Promise<void>;
  /**
   * Optional live tail across instances: yields events appended after
   * `afterId` by any instance, until `signal` aborts. Stores shared between
   * processes implement it so the instance holding a stream sees events other
   * instances append.
   *
   * @param sessionId The session.
   * @param afterId Yield only events after this id.
   * @param signal Stops the tail.
   */
  tail?(sessionId: string, afterId: number, signal: AbortSignal): AsyncIterable<StoredEvent>;
  /**
   * Optional, for stores other processes share: records that the instance
   * `owner` is alive. An instance beats while it runs requests whose POST
   * streams it records (the owner is named in each stream's opening record),
   * so an instance resuming one of those streams can tell a request still
   * running elsewhere from one whose instance died: when `lastHeartbeat`
   * stops changing for a lease period of the resuming instance's own clock,
   * the request is answered with an error and its stream ends. A store
   * without it cannot tell: such a stream then ends only with its answer.
   *
   * @param owner The instance's id (random, one per process and handler).
   */
  heartbeat?(owner: string): Promise<void>;
  /**
   * A token that changes with every {@link heartbeat} of `owner` (compared,
   * never ordered), or `undefined` when it never beat or the store forgot it.
   *
   * @param owner The instance's id.
   * @returns The token.
   */
  lastHeartbeat?(owner: string): Promise<string | undefined>;
  /**
   * `true` when other processes read and write the same events (a KV file or
   * database). A stream dropped on one instance may then go on at another, so
   * an instance never deletes a session's events because its own stream was
   * abandoned or its own copy of the session went idle: the store's retention
   * does that, and `DELETE` still deletes.
   */
  readonly shared?: boolean;
}
