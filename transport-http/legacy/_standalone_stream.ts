/**
 * A session's standalone SSE stream (the one a client opens with `GET`):
 * one connection at a time, a new one superseding the old, and, with an
 * event store, the resumability contract of seed 002 (recorded events,
 * store-owned ids, priming, replay after `Last-Event-ID`, a grace period for
 * reconnects).
 *
 * @module
 */

import type { EventStore, StoredEvent } from "@anubis/core";
import { logger } from "@anubis/core";
import type { JsonRpcMessage } from "@anubis/core/engine";
import { encodeForHttp, notSent } from "../_outbound.ts";
import { isPostStreamRecord } from "./_post_stream.ts";
import { encodeSseEvent, encodeSseMessage } from "../_sse_encoding.ts";
import { SseStream } from "../_sse_stream.ts";

/**
 * The SSE event that tells a resuming client its events `from` to `to`
 * (ids, inclusive) are gone from the store: `event: gap`, data
 * `{"from":from,"to":to}`, no id (the cursor does not move).
 */
function encodeGap(from: number, to: number): Uint8Array {
  return encodeSseEvent({ event: "gap", data: JSON.stringify({ from, to }) });
}

/**
 * The same loss as a JSON-RPC notification the official clients surface
 * (they dispatch only `message` events): a `notifications/message` warning
 * from logger `anubis.resume` with data `{ lostEvents: { from, to } }`. No
 * id and not recorded: the client's cursor stays on the priming id, so its
 * next resume asks for the same events, and a later resume never replays it.
 */
function encodeGapNotice(from: number, to: number): Uint8Array {
  return encodeSseMessage(JSON.stringify({
    jsonrpc: "2.0",
    method: "notifications/message",
    params: { level: "warning", logger: "anubis.resume", data: { lostEvents: { from, to } } },
  }));
}

/** The record that opens a standalone connection: skipped on replay, and no POST stream. */
const STREAM_OPENED = "GET\n";

/**
 * Options of a {@link StandaloneStream}.
 *
 * @example
 * ```ts
 * import type { StandaloneStreamOptions } from "./_standalone_stream.ts";
 * const options: StandaloneStreamOptions = { retryMs: 3_000, graceMs: 60_000, keepAliveMs: 15_000 };
 * ```
 */
export interface StandaloneStreamOptions {
  /** Records every message and makes the stream resumable. */
  eventStore?: EventStore;
  /** The `retry:` of the priming event, in milliseconds. */
  retryMs: number;
  /** How long the recorded events outlive a dropped connection that is not resumed. */
  graceMs: number;
  /** Keep-alive comment interval (0: none). */
  keepAliveMs: number;
  /**
   * Records an opening record per connection, whose store id orders the
   * session's streams across instances (set when a session bus joins them).
   */
  ordered?: boolean;
}

interface Connection {
  stream: SseStream;
  /**
   * Its place among the session's streams at every instance: the store id of
   * its opening record (with a store, once appended).
   */
  order?: number;
  /** The newest order another instance announced while the opening record was appended. */
  newerSeen: number;
  /** The last event id written (store ids, or this connection's own counter). */
  cursor: number;
  /** Live events that arrive while the replay runs. */
  buffer?: StoredEvent[];
  /** A store `tail()` delivers, so live offers are ignored. */
  tailed: boolean;
}

/**
 * The standalone stream of one session.
 *
 * @example
 * ```ts
 * import { StandaloneStream } from "./_standalone_stream.ts";
 * import assert from "node:assert/strict";
 * const standalone = new StandaloneStream("s1", { retryMs: 1000, graceMs: 1000, keepAliveMs: 0 });
 * const stream = await standalone.attach(undefined, false);
 * await standalone.send({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });
 * standalone.close();
 * assert.equal((await new Response(stream.readable).text()).includes("list_changed"), true);
 * ```
 */
export class StandaloneStream {
  /**
   * The session id.
   *
   * @example
   * ```ts
   * import { StandaloneStream } from "./_standalone_stream.ts";
   * import assert from "node:assert/strict";
   * const options = { retryMs: 1000, graceMs: 1000, keepAliveMs: 0 };
   * const standalone = new StandaloneStream("s1", options);
   * assert.equal(standalone.sessionId, "s1");
   * ```
   */
  readonly sessionId: string;
  readonly #options: StandaloneStreamOptions;
  #connection?: Connection;
  /**
   * With a store: messages are recorded from the start (another instance may
   * hold the client's stream) and after every attach; an abandoned stream's
   * grace period ending stops recording until the next attach.
   */
  #recording = true;
  #appending: Promise<void> = Promise.resolve();
  #grace?: ReturnType<typeof setTimeout>;
  #closed = false;

  /**
   * Creates the stream of a session.
   *
   * @param sessionId The session id (the store's key).
   * @param options The store and timings.
   */
  constructor(sessionId: string, options: StandaloneStreamOptions) {
    this.sessionId = sessionId;
    this.#options = options;
  }

  /**
   * Whether a client connection is attached.
   *
   * @example
   * ```ts
   * import { StandaloneStream } from "./_standalone_stream.ts";
   * import assert from "node:assert/strict";
   * const options = { retryMs: 1000, graceMs: 1000, keepAliveMs: 0 };
   * const standalone = new StandaloneStream("s1", options);
   * assert.equal(standalone.attached, false);
   * const stream = await standalone.attach(undefined, false);
   * assert.equal(standalone.attached, true);
   * await stream.readable.cancel(); // the client went away
   * assert.equal(standalone.attached, false);
   * standalone.close();
   * ```
   */
  get attached(): boolean {
    return this.#connection !== undefined;
  }

  /**
   * Sends a message on the stream: recorded first when a store is set (an
   * append that fails is not delivered), then written to the attached
   * connection, if any.
   *
   * @param message The message.
   * @returns Resolves when the message was recorded and written.
   *
   * @example
   * ```ts
   * import { MemoryEventStore } from "@anubis/event-store-memory";
   * import { StandaloneStream } from "./_standalone_stream.ts";
   * import assert from "node:assert/strict";
   * const eventStore = new MemoryEventStore();
   * const standalone = new StandaloneStream("s1", {
   *   eventStore,
   *   retryMs: 1000,
   *   graceMs: 1000,
   *   keepAliveMs: 0,
   * });
   * // No client is attached, but the message is recorded for one that resumes.
   * await standalone.send({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });
   * assert.deepEqual((await eventStore.replay("s1", 0)).map((event) => event.id), [ 1 ]);
   * standalone.close();
   * ```
   */
  send(message: JsonRpcMessage): Promise<void> {
    if (this.#closed) return Promise.resolve();
    const data = encodeForHttp(message);
    if (data === undefined) return notSent(message);
    const store = this.#options.eventStore;
    if (!store) {
      const connection = this.#connection;
      if (connection) connection.stream.write(encodeSseMessage(data, ++connection.cursor));
      return Promise.resolve();
    }
    if (!this.#recording) return Promise.resolve();
    // Appends are chained so live offers reach the connection in id order.
    this.#appending = this.#appending.then(async () => {
      let id: number;
      try {
        id = await store.append(this.sessionId, data);
      } catch (error) {
        logger.error("store.failed", `event store append failed for session ${this.sessionId}`, {
          error,
        });
        return;
      }
      this.#offer({ id, data });
    });
    return this.#appending;
  }

  /**
   * Attaches a client connection, superseding the previous one. With a store
   * the connection opens with a priming event (when `priming`), then replays
   * what came after `lastEventId`, then goes live with no gap and no
   * duplicate.
   *
   * @param lastEventId The client's `Last-Event-ID` (only with a store).
   * @param priming Whether the client's version expects a priming event (2025-11-25 on).
   * @param gapNotice Whether lost events are also told as a `notifications/message`
   *   warning (the session's version has it and its log level lets a warning through).
   * @returns The connection's SSE body.
   * @throws When the store cannot prime or replay (the caller fails closed).
   *
   * @example
   * ```ts
   * import { MemoryEventStore } from "@anubis/event-store-memory";
   * import { StandaloneStream } from "./_standalone_stream.ts";
   * import assert from "node:assert/strict";
   * const standalone = new StandaloneStream("s1", {
   *   eventStore: new MemoryEventStore(),
   *   retryMs: 1000,
   *   graceMs: 1000,
   *   keepAliveMs: 0,
   * });
   * await standalone.send({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });
   * const stream = await standalone.attach(0, true); // Last-Event-ID: 0
   * standalone.close();
   * const text = await new Response(stream.readable).text();
   * assert.equal(text.startsWith("id: 0\nretry: 1000\n"), true);
   * assert.equal(text.includes("id: 1\n"), true);
   * ```
   */
  async attach(
    lastEventId: number | undefined,
    priming: boolean,
    gapNotice = false,
  ): Promise<SseStream> {
    clearTimeout(this.#grace);
    const stream = new SseStream({ keepAliveMs: this.#options.keepAliveMs });
    const store = this.#options.eventStore;
    const connection: Connection = { stream, newerSeen: 0, cursor: 0, tailed: false };
    // The new connection is current before the old one closes, so closing
    // the old one is not mistaken for an abandoned stream.
    const previous = this.#connection;
    this.#connection = connection;
    previous?.stream.close();
    stream.signal.addEventListener("abort", () => this.#detached(connection), { once: true });
    if (!store) return stream;
    this.#recording = true;
    connection.buffer = [];
    try {
      if (this.#options.ordered) {
        // The store's per-session ids order the streams across instances
        // (their clocks may differ); the standalone stream skips the record.
        const order = await store.append(this.sessionId, STREAM_OPENED);
        connection.order = order;
        if (connection.newerSeen > order) stream.close();
      }
      // A cursor past the latest id (a bogus header) would hide live events.
      const latest = await store.latestId(this.sessionId);
      const cursor = lastEventId === undefined ? latest : Math.min(lastEventId, latest);
      connection.cursor = cursor;
      if (priming) {
        stream.write(encodeSseEvent({ id: cursor, retry: this.#options.retryMs, data: "" }));
      }
      if (lastEventId !== undefined) {
        const events = await store.replay(this.sessionId, cursor);
        // Ids are consecutive per session: a first event past the next id
        // means the store dropped what lay between (its retention). Said
        // before the replay: as a log warning the official clients surface
        // (when the session lets one through), then as an `event: gap`
        // clients that do not know it ignore.
        const next = events.length > 0 ? events[0].id : latest + 1;
        if (next > cursor + 1) {
          if (gapNotice) stream.write(encodeGapNotice(cursor + 1, next - 1));
          stream.write(encodeGap(cursor + 1, next - 1));
        }
        for (const event of events) this.#deliver(connection, event);
      }
    } catch (error) {
      connection.buffer = undefined;
      stream.close();
      throw error;
    }
    const buffered = connection.buffer;
    connection.buffer = undefined;
    for (const event of buffered) this.#deliver(connection, event);
    if (store.tail) {
      connection.tailed = true;
      this.#tail(store, connection);
    }
    return stream;
  }

  /**
   * Deletes the session's recorded events (on `DELETE`).
   *
   * @throws When the store fails; the stream is left as it was so the client can retry.
   *
   * @example
   * ```ts
   * import { MemoryEventStore } from "@anubis/event-store-memory";
   * import { StandaloneStream } from "./_standalone_stream.ts";
   * import assert from "node:assert/strict";
   * const eventStore = new MemoryEventStore();
   * const standalone = new StandaloneStream("s1", {
   *   eventStore,
   *   retryMs: 1000,
   *   graceMs: 1000,
   *   keepAliveMs: 0,
   * });
   * await standalone.send({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });
   * await standalone.deleteEvents();
   * assert.deepEqual(await eventStore.replay("s1", 0), []);
   * standalone.close();
   * ```
   */
  async deleteEvents(): Promise<void> {
    await this.#options.eventStore?.delete(this.sessionId);
  }

  /**
   * The attached connection's place among the session's streams (the store
   * id of its opening record), or `undefined` without a store or connection.
   *
   * @example
   * ```ts
   * import { MemoryEventStore } from "@anubis/event-store-memory";
   * import { StandaloneStream } from "./_standalone_stream.ts";
   * import assert from "node:assert/strict";
   * const standalone = new StandaloneStream("s1", {
   *   eventStore: new MemoryEventStore(),
   *   ordered: true,
   *   retryMs: 1000,
   *   graceMs: 1000,
   *   keepAliveMs: 0,
   * });
   * assert.equal(standalone.order, undefined);
   * await standalone.attach(undefined, false);
   * assert.equal(standalone.order, 1);
   * standalone.close();
   * ```
   */
  get order(): number | undefined {
    return this.#connection?.order;
  }

  /**
   * The client opened the session's stream anew at another instance, and a
   * message must not go out on two streams: closes the attached connection
   * when it is older. With a store the stream with the higher `order` is the
   * newer (one still appending its opening record waits for its own); without
   * a store, or without an `order`, the attached connection closes. The
   * session and its recording go on.
   *
   * @param order The other stream's {@link order}, if it has one.
   *
   * @example
   * ```ts
   * import { StandaloneStream } from "./_standalone_stream.ts";
   * import assert from "node:assert/strict";
   * const options = { retryMs: 1000, graceMs: 1000, keepAliveMs: 0 };
   * const standalone = new StandaloneStream("s1", options);
   * const stream = await standalone.attach(undefined, false);
   * standalone.supersede(undefined); // the client opened the stream at another instance
   * assert.equal(stream.open, false);
   * assert.equal(standalone.attached, false);
   * standalone.close();
   * ```
   */
  supersede(order: number | undefined): void {
    const connection = this.#connection;
    if (!connection) return;
    const ordering = this.#options.ordered && this.#options.eventStore;
    if (order !== undefined && ordering && connection.order === undefined) {
      connection.newerSeen = Math.max(connection.newerSeen, order);
    } else if (order === undefined || connection.order === undefined || connection.order < order) {
      connection.stream.close();
    }
  }

  /**
   * Closes the connection and stops recording (the session ended).
   *
   * @example
   * ```ts
   * import { StandaloneStream } from "./_standalone_stream.ts";
   * import assert from "node:assert/strict";
   * const options = { retryMs: 1000, graceMs: 1000, keepAliveMs: 0 };
   * const standalone = new StandaloneStream("s1", options);
   * const stream = await standalone.attach(undefined, false);
   * standalone.close();
   * // Neither delivered nor recorded any more:
   * await standalone.send({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });
   * assert.equal(stream.open, false);
   * assert.equal(standalone.attached, false);
   * ```
   */
  close(): void {
    this.#closed = true;
    this.#recording = false;
    clearTimeout(this.#grace);
    this.#connection?.stream.close();
    this.#connection = undefined;
  }

  #offer(event: StoredEvent): void {
    const connection = this.#connection;
    if (!connection || connection.tailed) return;
    if (connection.buffer) connection.buffer.push(event);
    else this.#deliver(connection, event);
  }

  #deliver(connection: Connection, event: StoredEvent): void {
    // The session's events include its POST streams' (resumable on their own).
    if (event.id <= connection.cursor || isPostStreamRecord(event.data)) return;
    connection.stream.write(encodeSseMessage(event.data, event.id));
    connection.cursor = event.id;
  }

  async #tail(store: EventStore, connection: Connection): Promise<void> {
    try {
      const events = store.tail!(this.sessionId, connection.cursor, connection.stream.signal);
      for await (const event of events) this.#deliver(connection, event);
    } catch (error) {
      if (connection.stream.open) {
        logger.error("store.failed", `event store tail failed for session ${this.sessionId}`, {
          error,
        });
      }
    }
    connection.stream.close();
  }

  /** A connection ended: with a store, the events wait `graceMs` for a reconnect. */
  #detached(connection: Connection): void {
    if (this.#connection !== connection) return;
    this.#connection = undefined;
    const store = this.#options.eventStore;
    // A shared store's stream may have moved to another instance: its
    // retention, not this instance, ends the events.
    if (!store || this.#closed || store.shared) return;
    this.#grace = setTimeout(() => {
      this.#recording = false;
      store.delete(this.sessionId).catch((error) =>
        logger.error("store.failed", `event store delete failed for session ${this.sessionId}`, {
          error,
        })
      );
    }, this.#options.graceMs);
  }
}
