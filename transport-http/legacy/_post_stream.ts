/**
 * Resumable POST SSE streams of legacy sessions (2025-11-25, SEP-1699
 * polling), with an event store. A POST answered with SSE opens with a
 * priming event; every message of the stream is recorded in the session's
 * events, tagged with the stream, before it is written; the server may close
 * the connection early (`frame.closeStream()`), and the client resumes with
 * `GET` and `Last-Event-ID`, receiving the rest of that stream and nothing
 * of any other.
 *
 * Recorded data of a POST stream is `<key>\n<message JSON>` (compact JSON
 * never holds a raw newline), where the key is the store id of the stream's
 * opening record (data `\n` and the JSON of the instance running the request
 * and the request's id), so keys are unique in the session across
 * instances. A stream that ends without a response (its request was
 * cancelled, or failed unanswered) records `<key>\n` and nothing after it.
 *
 * Every resumed stream ends: after its response or end record; or, when the
 * instance that ran its request stopped beating (the store's heartbeat, see
 * `EventStore.heartbeat`) for a lease, with a `-32603` error response for
 * the request's id, which the resuming instance records, so every later
 * resume of the stream ends with it too. Standalone messages stay plain JSON, so the `EventStore`
 * contract is unchanged and the standalone stream skips tagged events. SSE
 * ids of a POST stream are `<key>-<event id>`; the standalone stream's are
 * plain numbers. Every id is unique in the session.
 *
 * @module
 */

import type { EventStore, RequestId, StoredEvent } from "@anubis/core";
import { ErrorCode, logger } from "@anubis/core";
import { encodeSseEvent, encodeSseMessage } from "../_sse_encoding.ts";
import { SseStream } from "../_sse_stream.ts";

/**
 * Whether recorded data belongs to a POST stream (or opens one) rather than
 * to the standalone stream.
 *
 * @param data Recorded event data.
 * @returns `true` for POST stream records.
 *
 * @example
 * ```ts
 * import { isPostStreamRecord } from "./_post_stream.ts";
 * import assert from "node:assert/strict";
 * assert.equal(isPostStreamRecord('7\n{"jsonrpc":"2.0","id":1,"result":{}}'), true);
 * assert.equal(isPostStreamRecord('{"jsonrpc":"2.0","method":"ping"}'), false);
 * ```
 */
export function isPostStreamRecord(data: string): boolean {
  const first = data.charCodeAt(0);
  return first !== 123 && first !== 91; // neither "{" nor "["
}

/**
 * Reads a `Last-Event-ID` that names a POST stream (`<key>-<event id>`).
 *
 * @param raw The header value.
 * @returns The stream key and the last event id seen, or `undefined`.
 *
 * @example
 * ```ts
 * import { postStreamCursorOf } from "./_post_stream.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(postStreamCursorOf("12-15"), { key: 12, cursor: 15 });
 * assert.equal(postStreamCursorOf("15"), undefined);
 * ```
 */
export function postStreamCursorOf(raw: string): { key: number; cursor: number } | undefined {
  const match = /^(\d{1,15})-(\d{1,15})$/.exec(raw.trim());
  return match ? { key: Number(match[1]), cursor: Number(match[2]) } : undefined;
}

/**
 * Options of {@link PostStreams}.
 *
 * @example
 * ```ts
 * import type { PostStreamOptions } from "./_post_stream.ts";
 * const options: PostStreamOptions = { retryMs: 3_000, keepAliveMs: 15_000 };
 * ```
 */
export interface PostStreamOptions {
  /** The `retry:` of the priming event, in milliseconds. */
  retryMs: number;
  /** Keep-alive comment interval (0: none). */
  keepAliveMs: number;
  /**
   * How long a resumed stream waits without a heartbeat of the instance
   * running its request before answering the request with an error and
   * ending, in milliseconds (default {@link DEFAULT_LEASE_MS}). Instances
   * beat five times per lease while they run recorded requests.
   */
  leaseMs?: number;
}

/**
 * The default {@link PostStreamOptions.leaseMs}: ten seconds, so a resumed
 * stream whose instance was killed ends within about twelve.
 *
 * @example
 * ```ts
 * import { DEFAULT_LEASE_MS } from "./_post_stream.ts";
 * import assert from "node:assert/strict";
 * assert.equal(DEFAULT_LEASE_MS, 10_000);
 * ```
 */
export const DEFAULT_LEASE_MS = 10_000;

/** The message part of the record that ends a stream without a response. */
const END = "";

/** What a stream's opening record names: the instance running its request, and the request's id. */
interface Opening {
  owner?: string;
  id?: RequestId;
}

/** Reads an opening record (`\n`, then its JSON; older releases wrote `\n` alone). */
function openingOf(data: string): Opening | undefined {
  if (data.charCodeAt(0) !== 10) return undefined;
  if (data.length === 1) return {};
  try {
    const opening = JSON.parse(data.slice(1));
    return typeof opening === "object" && opening !== null ? opening : undefined;
  } catch {
    return undefined;
  }
}

/** The error a resumed stream ends with when its request's instance stopped before answering. */
function ownerGone(id: RequestId | undefined): string {
  return JSON.stringify({
    jsonrpc: "2.0",
    id: id ?? null,
    error: {
      code: ErrorCode.INTERNAL_ERROR,
      message: "The request's instance stopped before answering; its outcome is unknown",
    },
  });
}

/** A resumed stream followed here whose request runs at another instance. */
interface Watch {
  owner: string;
  /** The owner's heartbeat token when last read, and when it last changed (this clock). */
  token: string | undefined;
  changedAt: number;
  /** Answers the request with an error and ends the stream. */
  fail: () => void;
}

/** One message of a stream: its store id (0 when the append failed) and text. */
interface Recorded {
  id: number;
  json: string;
  last: boolean;
}

interface Connection {
  stream: SseStream;
  cursor: number;
  /** Events that arrive while a resumed connection replays. */
  buffer?: Recorded[];
}

/**
 * One recorded POST stream: written to its connection while one is
 * attached, recorded throughout.
 *
 * @example
 * ```ts
 * import { MemoryEventStore } from "@anubis/event-store-memory";
 * import { PostStreams } from "./_post_stream.ts";
 * import assert from "node:assert/strict";
 * const streams = new PostStreams(new MemoryEventStore(), { retryMs: 1000, keepAliveMs: 0 });
 * const post = streams.open("s1");
 * await post.send('{"jsonrpc":"2.0","id":1,"result":{}}', true);
 * const text = await new Response(post.body.readable).text();
 * assert.equal(text.startsWith("id: 1-1\nretry: 1000\ndata: \n\n"), true);
 * assert.equal(text.includes("id: 1-2"), true);
 * ```
 */
export class PostStream {
  /**
   * The body of the POST's response (priming first).
   *
   * @example
   * ```ts
   * import { MemoryEventStore } from "@anubis/event-store-memory";
   * import { PostStreams } from "./_post_stream.ts";
   * import assert from "node:assert/strict";
   * const streams = new PostStreams(new MemoryEventStore(), { retryMs: 1000, keepAliveMs: 0 });
   * const post = streams.open("s1");
   * await post.send('{"jsonrpc":"2.0","id":1,"result":{}}', true);
   * const text = await new Response(post.body.readable).text();
   * assert.deepEqual(text.split("\n\n"), [ // the priming event, then the response
   *   "id: 1-1\nretry: 1000\ndata: ",
   *   'id: 1-2\nevent: message\ndata: {"jsonrpc":"2.0","id":1,"result":{}}',
   *   "",
   * ]);
   * ```
   */
  readonly body: SseStream;
  readonly #streams: PostStreams;
  readonly #sessionId: string;
  readonly #requestId: RequestId | undefined;
  #key = 0;
  #connection: Connection | undefined;
  #chain: Promise<void>;
  #ended = false;

  /**
   * Opens the stream: records its opening and writes the priming event.
   * Use {@link PostStreams.open}.
   *
   * @param streams The handler's POST streams.
   * @param sessionId The session.
   * @param requestId The request the stream answers.
   */
  constructor(streams: PostStreams, sessionId: string, requestId?: RequestId) {
    this.#streams = streams;
    this.#sessionId = sessionId;
    this.#requestId = requestId;
    this.body = new SseStream({ keepAliveMs: streams.options.keepAliveMs });
    const connection: Connection = { stream: this.body, cursor: 0 };
    this.#attach(connection);
    const opening = "\n" + JSON.stringify({ owner: streams.owner, id: requestId });
    this.#chain = streams.store.append(sessionId, opening).then((key) => {
      this.#key = connection.cursor = key;
      streams.track(this.#liveKey, this);
      connection.stream.write(
        encodeSseEvent({ id: `${key}-${key}`, retry: streams.options.retryMs, data: "" }),
      );
    }, (error) => {
      // Without an opening record the stream cannot be resumed: it goes on unrecorded.
      logger.error("store.failed", `event store append failed for session ${sessionId}`, { error });
    });
  }

  /**
   * Records a message of the stream, then writes it to the connection.
   *
   * @param json The message as JSON text.
   * @param last Whether it is the stream's last (the response).
   * @returns Resolves once recorded and written.
   *
   * @example
   * ```ts
   * import { MemoryEventStore } from "@anubis/event-store-memory";
   * import { PostStreams } from "./_post_stream.ts";
   * import assert from "node:assert/strict";
   * const streams = new PostStreams(new MemoryEventStore(), { retryMs: 1000, keepAliveMs: 0 });
   * const progress = '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}';
   * const result = '{"jsonrpc":"2.0","id":1,"result":{}}';
   * const post = streams.open("s1");
   * await post.send(progress);
   * assert.equal(post.body.open, true);
   * await post.send(result, true); // the last message ends the stream
   * assert.equal(post.body.open, false);
   * ```
   */
  send(json: string, last = false): Promise<void> {
    this.#chain = this.#chain.then(async () => {
      if (this.#ended) return; // cancelled: what the work still says is dropped
      let id = 0;
      if (this.#key > 0) {
        try {
          id = await this.#streams.store.append(this.#sessionId, `${this.#key}\n${json}`);
        } catch (error) {
          logger.error("store.failed", `event store append failed for session ${this.#sessionId}`, {
            error,
          });
        }
      }
      this.#offer({ id, json, last });
    });
    return this.#chain;
  }

  /**
   * Closes the current connection after what was sent; recording goes on.
   *
   * @example
   * ```ts
   * import { MemoryEventStore } from "@anubis/event-store-memory";
   * import { PostStreams } from "./_post_stream.ts";
   * import assert from "node:assert/strict";
   * const streams = new PostStreams(new MemoryEventStore(), { retryMs: 1000, keepAliveMs: 0 });
   * const result = '{"jsonrpc":"2.0","id":1,"result":{}}';
   * const post = streams.open("s1");
   * post.closeConnection(); // the client polls: it comes back with GET and Last-Event-ID 1-1
   * await post.send(result, true);
   * assert.equal((await new Response(post.body.readable).text()).includes("result"), false);
   * const resumed = await streams.resume("s1", 1, 1);
   * assert.equal((await new Response(resumed?.readable).text()).includes("result"), true);
   * ```
   */
  closeConnection(): void {
    this.#chain = this.#chain.then(() => {
      // A stream that could not be recorded cannot be resumed: keep it open.
      if (this.#key === 0) return;
      const connection = this.#connection;
      this.#connection = undefined;
      connection?.stream.close();
    });
  }

  /**
   * The request this stream answers.
   *
   * @example
   * ```ts
   * import { MemoryEventStore } from "@anubis/event-store-memory";
   * import { PostStreams } from "./_post_stream.ts";
   * import assert from "node:assert/strict";
   * const streams = new PostStreams(new MemoryEventStore(), { retryMs: 1000, keepAliveMs: 0 });
   * const post = streams.open("s1", 7);
   * assert.equal(post.requestId, 7);
   * post.end();
   * ```
   */
  get requestId(): string | number | undefined {
    return this.#requestId;
  }

  /**
   * The session the stream belongs to.
   *
   * @example
   * ```ts
   * import { MemoryEventStore } from "@anubis/event-store-memory";
   * import { PostStreams } from "./_post_stream.ts";
   * import assert from "node:assert/strict";
   * const streams = new PostStreams(new MemoryEventStore(), { retryMs: 1000, keepAliveMs: 0 });
   * const post = streams.open("s1", 7);
   * assert.equal(post.sessionId, "s1");
   * post.end();
   * ```
   */
  get sessionId(): string {
    return this.#sessionId;
  }

  /**
   * Ends the stream without a last message (the work failed or was
   * cancelled): records the end, so a resumed stream closes after its
   * replay, and drops whatever the work sends afterwards.
   *
   * @example
   * ```ts
   * import { MemoryEventStore } from "@anubis/event-store-memory";
   * import { PostStreams } from "./_post_stream.ts";
   * import assert from "node:assert/strict";
   * const streams = new PostStreams(new MemoryEventStore(), { retryMs: 1000, keepAliveMs: 0 });
   * const post = streams.open("s1");
   * post.end();
   * const text = await new Response(post.body.readable).text();
   * assert.equal(text, "id: 1-1\nretry: 1000\ndata: \n\n");
   * assert.equal(streams.live.size, 0);
   * ```
   */
  end(): void {
    this.#chain = this.#chain.then(async () => {
      if (this.#ended) return;
      if (this.#key > 0) {
        try {
          await this.#streams.store.append(this.#sessionId, `${this.#key}\n${END}`);
        } catch (error) {
          logger.error("store.failed", `event store append failed for session ${this.#sessionId}`, {
            error,
          });
        }
      }
      this.#finish();
    });
  }

  /**
   * Attaches a resuming connection (superseding the current one): the
   * stream's events after `cursor` are replayed, then live delivery goes on.
   *
   * @param cursor The last event id the client saw.
   * @returns The connection's SSE body.
   * @throws When the store cannot replay.
   *
   * @example
   * ```ts
   * import { MemoryEventStore } from "@anubis/event-store-memory";
   * import { PostStreams } from "./_post_stream.ts";
   * import assert from "node:assert/strict";
   * const streams = new PostStreams(new MemoryEventStore(), { retryMs: 1000, keepAliveMs: 0 });
   * const progress = '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}';
   * const result = '{"jsonrpc":"2.0","id":1,"result":{}}';
   * const post = streams.open("s1");
   * await post.send(progress); // event 1-2
   * const again = await post.attach(1); // the client reconnects after the priming event
   * await post.send(result, true); // event 1-3
   * const text = await new Response(again.readable).text();
   * assert.equal(text.includes("id: 1-2"), true);
   * assert.equal(text.includes("id: 1-3"), true);
   * ```
   */
  async attach(cursor: number): Promise<SseStream> {
    const connection: Connection = {
      stream: new SseStream({ keepAliveMs: this.#streams.options.keepAliveMs }),
      cursor,
      buffer: [],
    };
    this.#attach(connection);
    try {
      const events = await this.#streams.replay(this.#sessionId, this.#key, cursor) ?? [];
      for (const { id, data } of events) {
        if (data !== END) this.#deliver(connection, { id, json: data, last: false });
      }
    } catch (error) {
      connection.stream.close();
      throw error;
    }
    const buffered = connection.buffer!;
    connection.buffer = undefined;
    for (const event of buffered) this.#deliver(connection, event);
    if (this.#ended) connection.stream.close();
    return connection.stream;
  }

  get #liveKey(): string {
    return `${this.#sessionId} ${this.#key}`;
  }

  #attach(connection: Connection): void {
    const previous = this.#connection;
    this.#connection = connection;
    previous?.stream.close();
    connection.stream.signal.addEventListener("abort", () => {
      if (this.#connection === connection) this.#connection = undefined;
    }, { once: true });
  }

  #offer(event: Recorded): void {
    const connection = this.#connection;
    if (connection?.buffer) connection.buffer.push(event);
    else if (connection) this.#deliver(connection, event);
    if (event.last) this.#finish();
  }

  #deliver(connection: Connection, event: Recorded): void {
    if (event.id === 0) {
      connection.stream.write(encodeSseMessage(event.json));
      return;
    }
    if (event.id <= connection.cursor) return;
    connection.stream.write(encodeSseEvent({
      id: `${this.#key}-${event.id}`,
      event: "message",
      data: event.json,
    }));
    connection.cursor = event.id;
  }

  #finish(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#streams.untrack(this.#liveKey);
    // A resuming connection still replaying closes once it caught up.
    if (!this.#connection?.buffer) this.#connection?.stream.close();
  }
}

/**
 * The recorded POST streams of one handler: opens them, and resumes them on
 * `GET` with a `Last-Event-ID` that names one (live here, or from the store
 * when another instance or an earlier connection recorded it).
 *
 * @example
 * ```ts
 * import { MemoryEventStore } from "@anubis/event-store-memory";
 * import { PostStreams } from "./_post_stream.ts";
 * import assert from "node:assert/strict";
 * const streams = new PostStreams(new MemoryEventStore(), { retryMs: 1000, keepAliveMs: 0 });
 * const post = streams.open("s1");
 * post.closeConnection();
 * await post.send('{"jsonrpc":"2.0","id":1,"result":{}}', true);
 * const resumed = await streams.resume("s1", 1, 1);
 * assert.equal((await new Response(resumed?.readable).text()).includes('"result"'), true);
 * ```
 */
export class PostStreams {
  /**
   * The event store.
   *
   * @example
   * ```ts
   * import { MemoryEventStore } from "@anubis/event-store-memory";
   * import { PostStreams } from "./_post_stream.ts";
   * import assert from "node:assert/strict";
   * const store = new MemoryEventStore();
   * const streams = new PostStreams(store, { retryMs: 1000, keepAliveMs: 0 });
   * await streams.open("s1", 1).send('{"jsonrpc":"2.0","id":1,"result":{}}', true);
   * // The opening record (who runs the request, and its id), then the message
   * // tagged with the stream's key.
   * assert.deepEqual((await streams.store.replay("s1", 0)).map((event) => event.data), [
   *   `\n{"owner":"${streams.owner}","id":1}`,
   *   '1\n{"jsonrpc":"2.0","id":1,"result":{}}',
   * ]);
   * ```
   */
  readonly store: EventStore;
  /**
   * Priming and keep-alive.
   *
   * @example
   * ```ts
   * import { MemoryEventStore } from "@anubis/event-store-memory";
   * import { PostStreams } from "./_post_stream.ts";
   * import assert from "node:assert/strict";
   * const streams = new PostStreams(new MemoryEventStore(), { retryMs: 1000, keepAliveMs: 0 });
   * assert.deepEqual(streams.options, { retryMs: 1000, keepAliveMs: 0 });
   * ```
   */
  readonly options: PostStreamOptions;
  /**
   * The streams whose request still runs here, by `<session id> <key>`.
   *
   * @example
   * ```ts
   * import { MemoryEventStore } from "@anubis/event-store-memory";
   * import { PostStreams } from "./_post_stream.ts";
   * import assert from "node:assert/strict";
   * const streams = new PostStreams(new MemoryEventStore(), { retryMs: 1000, keepAliveMs: 0 });
   * const progress = '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}';
   * const result = '{"jsonrpc":"2.0","id":1,"result":{}}';
   * const post = streams.open("s1");
   * await post.send(progress);
   * assert.deepEqual([...streams.live.keys()], [ "s1 1" ]);
   * await post.send(result, true);
   * assert.equal(streams.live.size, 0);
   * ```
   */
  readonly live: Map<string, PostStream> = new Map();
  /**
   * This instance's id in the streams' opening records and the store's
   * heartbeats (random, one per handler).
   *
   * @example
   * ```ts
   * import { MemoryEventStore } from "@anubis/event-store-memory";
   * import { PostStreams } from "./_post_stream.ts";
   * import assert from "node:assert/strict";
   * const store = new MemoryEventStore();
   * const options = { retryMs: 1000, keepAliveMs: 0 };
   * assert.notEqual(new PostStreams(store, options).owner, new PostStreams(store, options).owner);
   * ```
   */
  readonly owner: string = crypto.randomUUID();
  readonly #leaseMs: number;
  /** Beats while {@link live} holds a stream (one timer for all of them). */
  #beating: ReturnType<typeof setInterval> | undefined;
  /** Resumed streams whose request runs at another instance, checked by one timer. */
  readonly #watches = new Set<Watch>();
  #checking: ReturnType<typeof setInterval> | undefined;
  #checkRunning = false;

  /**
   * Creates the registry.
   *
   * @param store The event store.
   * @param options Priming, keep-alive and the owner lease.
   */
  constructor(store: EventStore, options: PostStreamOptions) {
    this.store = store;
    this.options = options;
    this.#leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  }

  /**
   * Registers a stream whose request runs here (from its opening on); while
   * any is registered, this instance beats in the store.
   *
   * @param liveKey `<session id> <key>`.
   * @param post The stream.
   *
   * @example
   * ```ts
   * import { MemoryEventStore } from "@anubis/event-store-memory";
   * import { PostStreams } from "./_post_stream.ts";
   * import assert from "node:assert/strict";
   * const store = new MemoryEventStore();
   * const streams = new PostStreams(store, { retryMs: 1000, keepAliveMs: 0 });
   * const post = streams.open("s1"); // tracked once its opening is recorded
   * await post.send('{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}');
   * assert.equal(await store.lastHeartbeat(streams.owner), "1");
   * streams.untrack("s1 1"); // its last message does this
   * ```
   */
  track(liveKey: string, post: PostStream): void {
    this.live.set(liveKey, post);
    if (this.#beating !== undefined || !this.store.heartbeat) return;
    this.#beat();
    this.#beating = setInterval(() => this.#beat(), this.#leaseMs / 5);
  }

  /**
   * Forgets a stream whose request ended; the last one stops the heartbeat.
   *
   * @param liveKey `<session id> <key>`.
   *
   * @example
   * ```ts
   * import { MemoryEventStore } from "@anubis/event-store-memory";
   * import { PostStreams } from "./_post_stream.ts";
   * import assert from "node:assert/strict";
   * const streams = new PostStreams(new MemoryEventStore(), { retryMs: 1000, keepAliveMs: 0 });
   * streams.untrack("s1 1"); // unknown: nothing
   * assert.equal(streams.live.size, 0);
   * ```
   */
  untrack(liveKey: string): void {
    this.live.delete(liveKey);
    if (this.live.size > 0 || this.#beating === undefined) return;
    clearInterval(this.#beating);
    this.#beating = undefined;
  }

  /**
   * The session's client cancelled one of its requests: the request's
   * stream, when it runs here, ends now (recorded as ended, so a resume
   * closes after its replay), whatever the work does with the cancellation.
   *
   * @param sessionId The session.
   * @param requestId The cancelled request's id.
   *
   * @example
   * ```ts
   * import { MemoryEventStore } from "@anubis/event-store-memory";
   * import { PostStreams } from "./_post_stream.ts";
   * import assert from "node:assert/strict";
   * const streams = new PostStreams(new MemoryEventStore(), { retryMs: 1000, keepAliveMs: 0 });
   * const post = streams.open("s1", 3);
   * await post.send('{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}');
   * streams.cancelled("s1", 3);
   * await post.send('{"jsonrpc":"2.0","id":3,"result":{}}', true); // dropped
   * const resumed = await streams.resume("s1", 1, 2);
   * assert.equal(await new Response(resumed?.readable).text(), ""); // nothing more: it ends
   * ```
   */
  cancelled(sessionId: string, requestId: string | number): void {
    for (const post of this.live.values()) {
      if (post.sessionId === sessionId && post.requestId === requestId) post.end();
    }
  }

  /**
   * The handler is closing: each request still running here is answered
   * with the `-32603` of a stopped instance (recorded, so a client resuming
   * elsewhere gets it without waiting for the lease), and the heartbeat and
   * the checks of followed streams stop.
   *
   * @example
   * ```ts
   * import { MemoryEventStore } from "@anubis/event-store-memory";
   * import { PostStreams } from "./_post_stream.ts";
   * import assert from "node:assert/strict";
   * const streams = new PostStreams(new MemoryEventStore(), { retryMs: 1000, keepAliveMs: 0 });
   * const post = streams.open("s1", 4);
   * await post.send('{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}');
   * streams.close();
   * const text = await new Response(post.body.readable).text();
   * assert.equal(text.includes('data: {"jsonrpc":"2.0","id":4,"error":{"code":-32603'), true);
   * ```
   */
  close(): void {
    for (const post of [...this.live.values()]) post.send(ownerGone(post.requestId), true);
    clearInterval(this.#beating);
    this.#beating = undefined;
    clearInterval(this.#checking);
    this.#checking = undefined;
    this.#watches.clear();
  }

  #beat(): void {
    this.store.heartbeat!(this.owner).catch((error) =>
      logger.error("store.failed", "event store heartbeat failed", { error })
    );
  }

  /**
   * Opens a recorded stream for a POST of the session.
   *
   * @param sessionId The session.
   * @param requestId The request it answers (named in the opening record).
   * @returns The stream; its `body` answers the POST.
   *
   * @example
   * ```ts
   * import { MemoryEventStore } from "@anubis/event-store-memory";
   * import { PostStreams } from "./_post_stream.ts";
   * import assert from "node:assert/strict";
   * const streams = new PostStreams(new MemoryEventStore(), { retryMs: 1000, keepAliveMs: 0 });
   * const post = streams.open("s1");
   * post.end();
   * const response = post.body.response();
   * assert.equal(response.headers.get("content-type"), "text/event-stream");
   * assert.equal((await response.text()).startsWith("id: 1-1\n"), true);
   * ```
   */
  open(sessionId: string, requestId?: string | number): PostStream {
    return new PostStream(this, sessionId, requestId);
  }

  /**
   * Resumes a POST stream after `cursor`: attached to the running request
   * when it runs here; else replayed from the store and, unless the replay
   * holds its end (the response, or the record of an end without one),
   * followed with the store's `tail()` until its end. While followed, the
   * instance running the request must keep beating: once its heartbeat has
   * not changed for a lease (or at once when it ran here and no longer
   * does), the request is answered with a `-32603` error, recorded, and the
   * stream ends. A store without `tail()` ends the stream after the replay.
   *
   * @param sessionId The session.
   * @param key The stream's key.
   * @param cursor The last event id the client saw.
   * @returns The SSE body, or `undefined` when the session has no such stream (any more).
   * @throws When the store cannot replay.
   *
   * @example
   * ```ts
   * import { MemoryEventStore } from "@anubis/event-store-memory";
   * import { PostStreams } from "./_post_stream.ts";
   * import assert from "node:assert/strict";
   * const store = new MemoryEventStore();
   * const options = { retryMs: 1000, keepAliveMs: 0 };
   * const here = new PostStreams(store, options);
   * const result = '{"jsonrpc":"2.0","id":1,"result":{}}';
   * const post = here.open("s1", 1);
   * post.closeConnection();
   * await post.send(result, true);
   * const elsewhere = new PostStreams(store, options); // another instance, sharing the store
   * const resumed = await elsewhere.resume("s1", 1, 1);
   * assert.equal(
   *   await new Response(resumed?.readable).text(),
   *   'id: 1-2\nevent: message\ndata: {"jsonrpc":"2.0","id":1,"result":{}}\n\n',
   * );
   * assert.equal(await elsewhere.resume("s2", 1, 1), undefined);
   * ```
   *
   * @example The instance running the request stopped beating
   * ```ts
   * import { MemoryEventStore } from "@anubis/event-store-memory";
   * import { PostStreams } from "./_post_stream.ts";
   * import assert from "node:assert/strict";
   * const store = new MemoryEventStore();
   * const dead = new PostStreams(store, { retryMs: 1000, keepAliveMs: 0 });
   * const post = dead.open("s1", 9);
   * post.closeConnection();
   * await post.send('{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}');
   * dead.close(); // as if killed: no more beats, no answer
   * const resuming = new PostStreams(store, { retryMs: 1000, keepAliveMs: 0, leaseMs: 50 });
   * const text = await new Response((await resuming.resume("s1", 1, 2))?.readable).text();
   * assert.equal(text.startsWith('id: 1-3\nevent: message\ndata: {"jsonrpc":"2.0","id":9,"error"'), true);
   * resuming.close();
   * ```
   */
  async resume(sessionId: string, key: number, cursor: number): Promise<SseStream | undefined> {
    const live = this.live.get(`${sessionId} ${key}`);
    if (live) return await live.attach(cursor);
    const found = await this.#read(sessionId, key, cursor);
    if (!found) return undefined;
    const stream = new SseStream({ keepAliveMs: this.options.keepAliveMs });
    let last = cursor;
    /** Writes an event of the stream; `true` once it ended. */
    const write = (event: StoredEvent): boolean => {
      if (event.id !== 0 && event.id <= last) return false;
      if (event.data === END) return true;
      stream.write(
        event.id === 0
          ? encodeSseMessage(event.data)
          : encodeSseEvent({ id: `${key}-${event.id}`, event: "message", data: event.data }),
      );
      if (event.id !== 0) last = event.id;
      return isResponse(event.data);
    };
    // `some` stops at the end, which is the stream's last event; one at or
    // before the cursor was delivered already.
    if (found.events.some(write) || found.ended || !this.store.tail) {
      stream.close();
      return stream;
    }
    const { owner, id } = found.opening;
    const fail = () => this.#fail(sessionId, key, id, stream, write);
    if (owner === this.owner) {
      // It ran here, is no longer live, and recorded no end (its last append failed).
      fail();
      return stream;
    }
    if (owner !== undefined && this.store.lastHeartbeat) {
      await this.#watch(owner, stream, fail);
    }
    this.#follow(sessionId, key, last, stream, write);
    return stream;
  }

  /** Answers the stream's request with an error (recorded for every later resume) and ends it. */
  async #fail(
    sessionId: string,
    key: number,
    requestId: RequestId | undefined,
    stream: SseStream,
    write: (event: StoredEvent) => boolean,
  ): Promise<void> {
    if (!stream.open) return;
    const data = ownerGone(requestId);
    let id = 0;
    try {
      id = await this.store.append(sessionId, `${key}\n${data}`);
    } catch (error) {
      logger.error("store.failed", `event store append failed for session ${sessionId}`, { error });
    }
    logger.warn(
      "stream.owner_gone",
      `a resumed stream of session ${sessionId} ended: its request's instance stopped before answering`,
      { sessionId, requestId },
    );
    write({ id, data });
    stream.close();
  }

  /** Checks `owner`'s heartbeat for as long as `stream` is open. */
  async #watch(owner: string, stream: SseStream, fail: () => void): Promise<void> {
    let token: string | undefined;
    try {
      token = await this.store.lastHeartbeat!(owner);
    } catch (error) {
      logger.error("store.failed", "event store heartbeat read failed", { error });
    }
    const watch: Watch = { owner, token, changedAt: Date.now(), fail };
    this.#watches.add(watch);
    stream.signal.addEventListener("abort", () => {
      this.#watches.delete(watch);
      if (this.#watches.size > 0 || this.#checking === undefined) return;
      clearInterval(this.#checking);
      this.#checking = undefined;
    }, { once: true });
    this.#checking ??= setInterval(() => this.#check(), this.#leaseMs / 5);
  }

  /** One check of every watched owner (each read once); those silent for a lease fail. */
  async #check(): Promise<void> {
    if (this.#checkRunning) return;
    this.#checkRunning = true;
    try {
      const tokens = new Map<string, string | undefined>();
      for (const watch of [...this.#watches]) {
        if (!tokens.has(watch.owner)) {
          tokens.set(watch.owner, await this.store.lastHeartbeat!(watch.owner));
        }
        const token = tokens.get(watch.owner);
        const now = Date.now();
        if (token !== watch.token) {
          watch.token = token;
          watch.changedAt = now;
        } else if (now - watch.changedAt >= this.#leaseMs) {
          this.#watches.delete(watch);
          watch.fail();
        }
      }
    } catch (error) {
      logger.error("store.failed", "event store heartbeat read failed", { error });
    } finally {
      this.#checkRunning = false;
    }
  }

  /**
   * The stream's events after `cursor`, from the store, as message JSON (the
   * record of an end without a response has empty data).
   *
   * @param sessionId The session.
   * @param key The stream's key.
   * @param cursor The last event id seen.
   * @returns The events (data without the tag), or `undefined` when the
   * session's events do not hold the stream's opening (another session's
   * key, or one the store no longer retains).
   *
   * @example
   * ```ts
   * import { MemoryEventStore } from "@anubis/event-store-memory";
   * import { PostStreams } from "./_post_stream.ts";
   * import assert from "node:assert/strict";
   * const streams = new PostStreams(new MemoryEventStore(), { retryMs: 1000, keepAliveMs: 0 });
   * const progress = '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}';
   * const result = '{"jsonrpc":"2.0","id":1,"result":{}}';
   * const post = streams.open("s1");
   * await post.send(progress);
   * await post.send(result, true);
   * const after = await streams.replay("s1", 1, 2); // stream 1 after event 2
   * assert.deepEqual(after?.map((event) => event.data), [ '{"jsonrpc":"2.0","id":1,"result":{}}' ]);
   * assert.equal(await streams.replay("s1", 2, 0), undefined); // no stream opens at 2
   * ```
   */
  async replay(
    sessionId: string,
    key: number,
    cursor: number,
  ): Promise<StoredEvent[] | undefined> {
    return (await this.#read(sessionId, key, cursor))?.events;
  }

  /** The stream's opening and its events after `cursor` (see {@link replay}). */
  async #read(
    sessionId: string,
    key: number,
    cursor: number,
  ): Promise<{ opening: Opening; events: StoredEvent[]; ended: boolean } | undefined> {
    const events = await this.store.replay(sessionId, key - 1);
    const opening = events[0]?.id === key ? openingOf(events[0].data) : undefined;
    if (!opening) return undefined;
    const prefix = `${key}\n`;
    const mine = events.filter((event) => event.data.startsWith(prefix))
      .map((event) => ({ id: event.id, data: event.data.slice(prefix.length) }));
    // Its end (a response, or an end record) is its last event, perhaps at the cursor itself.
    const last = mine.at(-1)?.data;
    return {
      opening,
      events: mine.filter((event) => event.id > cursor),
      ended: last !== undefined && (last === END || isResponse(last)),
    };
  }

  async #follow(
    sessionId: string,
    key: number,
    after: number,
    stream: SseStream,
    write: (event: StoredEvent) => boolean,
  ): Promise<void> {
    const prefix = `${key}\n`;
    try {
      for await (const event of this.store.tail!(sessionId, after, stream.signal)) {
        if (!event.data.startsWith(prefix)) continue;
        if (write({ id: event.id, data: event.data.slice(prefix.length) })) break;
      }
    } catch (error) {
      if (stream.open) {
        logger.error("store.failed", `event store tail failed for ${sessionId}`, { error });
      }
    }
    stream.close();
  }
}

/** Whether a recorded message is a response (a POST stream's last message). */
function isResponse(json: string): boolean {
  try {
    const message = JSON.parse(json);
    return typeof message === "object" && message !== null && !("method" in message);
  } catch {
    return false;
  }
}
