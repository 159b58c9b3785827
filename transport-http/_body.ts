/**
 * Reading a request body with a size bound, without buffering more than the
 * bound allows.
 *
 * @module
 */

import { classifyMessage, type Decoded, decodeMessage, notJson } from "@anubis/core/engine";
import type { ByteBudget, RetainedRefusal } from "./_byte_budgets.ts";
import { clientOf, type RequestContext } from "./request_context.ts";

/** How {@link readMessage} reads a body. */
export interface BodyLimits {
  /** The bound. */
  maxBytes: number;
  /**
   * The body deadline, if any: a body not received within its time rejects
   * with {@link BodyTimeoutError}.
   */
  clock?: BodyClock;
  /**
   * The bytes every body being read may hold at once, if bounded: a body
   * larger than 16 KiB (the `json()` path is not counted) takes its announced
   * length before it is read, or the bytes of an unannounced one as they
   * arrive, gives them back once read, and rejects with {@link BodyBudgetError}
   * when they do not fit the total or the client's share.
   */
  budget?: ByteBudget;
  /**
   * The bound of a body over 16 KiB that can only open a session (see
   * {@link bodyBoundOf}), if lower than `maxBytes`.
   */
  openingMaxBytes?: number;
}

/**
 * Reads and classifies a JSON-RPC body, refusing bodies over `maxBytes`: by
 * `Content-Length` before reading, and while reading when the length is not
 * announced, so no more than the bound is ever buffered. Invalid UTF-8
 * becomes U+FFFD. A body announced at up to 64 KiB is parsed by
 * `Request.json()`: on `Deno.serve` that takes a body already received
 * without a stream, which is markedly cheaper than `text()` once the
 * request's headers have been read. A larger one is read as a stream, since
 * `json()` reserves the announced length before a byte arrives: memory then
 * follows the bytes received, not the bytes announced (1,000 clients that
 * announce 4 MiB and send one byte cost kilobytes, not gigabytes). Text that is not JSON gives the `-32700`
 * classification, and so does a body that starts with a byte order mark
 * (`Deno.serve`'s `json()` does not skip it, so neither does the streamed
 * path); a failing read rejects.
 *
 * @param request The request.
 * @param limits Its bound, deadline and budget (see {@link BodyLimits}; the
 * handler makes its own once, so a read allocates nothing for them).
 * @param context Who sends the body (the client as the per-client bounds count
 * it), read only for a body the budget counts.
 * @returns The classification, or `undefined` when the body is too large.
 *
 * @example
 * ```ts
 * import { readMessage } from "./_body.ts";
 * import assert from "node:assert/strict";
 * const post = (body: string) => new Request("http://localhost/mcp", { method: "POST", body });
 * assert.equal((await readMessage(post('{"jsonrpc":"2.0","id":1,"method":"ping"}'), { maxBytes: 1024 }))?.kind, "request");
 * assert.equal((await readMessage(post("{not json"), { maxBytes: 1024 }))?.kind, "invalid");
 * assert.equal(await readMessage(post("0123456789"), { maxBytes: 4 }), undefined);
 * ```
 */
export function readMessage(
  request: Request,
  limits: BodyLimits,
  context?: RequestContext,
): Promise<Decoded | undefined> {
  // Not async: the common body (announced, at most 16 KiB) is parsed with
  // one continuation instead of an async frame and its promises.
  try {
    const { maxBytes, clock, budget, openingMaxBytes } = limits;
    const length = request.headers.get("content-length");
    if (length === null) {
      const bound = bodyBoundOf(request, maxBytes, openingMaxBytes);
      return readUnannouncedMessage(request, bound, clock, budget, context);
    }
    const announced = Number(length);
    if (announced > maxBytes) return refuseAnnounced(request);
    if (announced > RESERVE_MAX_BYTES) {
      // Only a large body pays for the headers' look-up.
      if (announced > bodyBoundOf(request, maxBytes, openingMaxBytes)) {
        return refuseAnnounced(request);
      }
      return readAnnounced(request, announced, clock, budget, context).then(decodeMessage);
    }
    const read = request.json();
    return clock
      ? clock.race(read, classifyMessage, notJsonOrRethrow)
      : read.then(classifyMessage, notJsonOrRethrow);
  } catch (error) {
    return Promise.reject(error);
  }
}

/**
 * The bound of a request's body: `openingMaxBytes` for a POST that can only
 * open a session, one with neither `Mcp-Session-Id` nor `Mcp-Method` (a
 * legacy `initialize`: any other such POST is refused whatever its body),
 * else `maxBytes`. What a session keeps of its `initialize` is bounded far
 * lower (`maxSessionBytes`), so reading and parsing megabytes only to refuse
 * them would cost memory for nothing.
 *
 * @param request The request.
 * @param maxBytes The bound of every body.
 * @param openingMaxBytes The bound of a body that can only open a session.
 * @returns The bound.
 *
 * @example
 * ```ts
 * import { bodyBoundOf } from "./_body.ts";
 * import assert from "node:assert/strict";
 * const opening = new Request("http://localhost/mcp", { method: "POST" });
 * assert.equal(bodyBoundOf(opening, 4096, 1024), 1024);
 * const inSession = new Request("http://localhost/mcp", {
 *   method: "POST",
 *   headers: { "mcp-session-id": "b4f1" },
 * });
 * assert.equal(bodyBoundOf(inSession, 4096, 1024), 4096);
 * ```
 */
export function bodyBoundOf(
  request: Request,
  maxBytes: number,
  openingMaxBytes: number | undefined,
): number {
  if (openingMaxBytes === undefined || openingMaxBytes >= maxBytes) return maxBytes;
  const headers = request.headers;
  return headers.has("mcp-session-id") || headers.has("mcp-method") ? maxBytes : openingMaxBytes;
}

async function readUnannouncedMessage(
  request: Request,
  maxBytes: number,
  clock?: BodyClock,
  budget?: ByteBudget,
  context?: RequestContext,
): Promise<Decoded | undefined> {
  // A byte order mark stays in the text, so it is refused as `json()`
  // refuses it on Deno.serve (RFC 8259 §8.1: senders must not send one).
  const text = await readUnannounced(request, maxBytes, clock, budget, context);
  return text === undefined ? undefined : decodeMessage(text);
}

async function refuseAnnounced(request: Request): Promise<undefined> {
  await request.body?.cancel();
  return undefined;
}

function notJsonOrRethrow(error: unknown): Decoded {
  if (error instanceof SyntaxError) return notJson();
  throw error;
}

/**
 * What reading a body rejects with when the bodies being read at once hold
 * as much as their budget allows, in total or for this client (the handler
 * answers 503, or 429 for the client's share, with `Retry-After`).
 *
 * @example
 * ```ts
 * import { BodyBudgetError } from "./_body.ts";
 * import assert from "node:assert/strict";
 * const total = new BodyBudgetError("total", 1024);
 * assert.equal(total.message, "the request bodies being read hold 1024 bytes already");
 * assert.equal(new BodyBudgetError("client", 512).refused, "client");
 * ```
 */
export class BodyBudgetError extends Error {
  /** Which bound refused the body: the client's share or the total. */
  readonly refused: RetainedRefusal;

  /**
   * Creates the error.
   *
   * @param refused Which bound refused the body.
   * @param max That bound, in bytes.
   */
  constructor(refused: RetainedRefusal, max: number) {
    super(
      refused === "client"
        ? `this client's request bodies being read hold ${max} bytes already`
        : `the request bodies being read hold ${max} bytes already`,
    );
    this.name = "BodyBudgetError";
    this.refused = refused;
  }
}

/**
 * What reading a body rejects with when the body did not arrive within the
 * {@link BodyClock}'s time.
 *
 * @example
 * ```ts
 * import { BodyTimeoutError } from "./_body.ts";
 * if (new BodyTimeoutError(100).message !== "the body did not arrive within 100 ms") {
 *   throw new Error("message");
 * }
 * ```
 */
export class BodyTimeoutError extends Error {
  /**
   * Creates the error.
   *
   * @param ms The time the body had.
   */
  constructor(ms: number) {
    super(`the body did not arrive within ${ms} ms`);
    this.name = "BodyTimeoutError";
  }
}

// A read being timed: a node of the clock's circular list, oldest first (a
// list, not a Set: a Set's table is reallocated as it grows and shrinks
// around each read). The clock's own node closes the circle, so a node takes
// itself out without the clock.
class Watched {
  /** The tick the read started in. */
  tick = 0;
  prev: Watched = this;
  next: Watched = this;

  /** Gives the read up (the clock's own node has nothing to give up). */
  expire(): void {}

  /** Puts the node last in `list`. */
  linkInto(list: Watched, tick: number): void {
    this.tick = tick;
    this.prev = list.prev;
    this.next = list;
    list.prev.next = this;
    list.prev = this;
  }

  /** Takes the node out of its list (nothing when it is out). */
  unlink(): void {
    this.prev.next = this.next;
    this.next.prev = this.prev;
    this.prev = this.next = this;
  }
}

/** A {@link BodyClock.watch}: its `expire` is the caller's. */
class WatchedCall extends Watched {
  readonly #expire: () => void;

  constructor(expire: () => void) {
    super();
    this.#expire = expire;
  }

  override expire(): void {
    this.#expire();
  }
}

/**
 * A {@link BodyClock.race}: settles its promise as the read does (through the
 * caller's continuations, when given), or rejects it at expiry; one object
 * per read, with the two callbacks the read needs.
 */
class WatchedRead<T, R> extends Watched {
  readonly promise: Promise<R>;
  readonly #read: Promise<T>;
  readonly #ms: number;
  readonly #then: ((value: T) => R) | undefined;
  readonly #otherwise: ((error: unknown) => R) | undefined;
  #resolve!: (value: R) => void;
  #reject!: (error: unknown) => void;

  constructor(
    read: Promise<T>,
    ms: number,
    then: ((value: T) => R) | undefined,
    otherwise: ((error: unknown) => R) | undefined,
  ) {
    super();
    this.#read = read;
    this.#ms = ms;
    this.#then = then;
    this.#otherwise = otherwise;
    this.promise = new Promise<R>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
  }

  /** Starts following the read (once linked, so a read settled at once is unlinked). */
  follow(): void {
    this.#read.then(this.#settled, this.#failed);
  }

  override expire(): void {
    this.#read.catch(() => {}); // given up: its own failure, later, concerns nobody
    this.#reject(new BodyTimeoutError(this.#ms));
  }

  readonly #settled = (value: T): void => {
    this.unlink();
    const then = this.#then;
    if (then === undefined) return this.#resolve(value as unknown as R);
    try {
      this.#resolve(then(value));
    } catch (error) {
      this.#reject(error);
    }
  };

  readonly #failed = (error: unknown): void => {
    this.unlink();
    const otherwise = this.#otherwise;
    if (otherwise === undefined) return this.#reject(error);
    try {
      this.#resolve(otherwise(error));
    } catch (thrown) {
      this.#reject(thrown);
    }
  };
}

/**
 * The deadline of request bodies: a body not fully received within `ms` of
 * the start of its read is given up ({@link BodyTimeoutError}), at most a
 * quarter of `ms` (or 1 s) late. One timer serves every pending read (they
 * expire in the order they started), running only while reads are pending
 * and never keeping the process alive; a read costs no clock reading.
 *
 * @example
 * ```ts
 * import { BodyClock, BodyTimeoutError } from "./_body.ts";
 * const clock = new BodyClock(50);
 * const slow = new Promise((resolve) => setTimeout(resolve, 300, "late"));
 * const failed = await clock.race(slow).catch((error) => error);
 * if (!(failed instanceof BodyTimeoutError)) throw new Error("the body timed out");
 * if (await clock.race(Promise.resolve(1)) !== 1) throw new Error("a body in time is read");
 * ```
 */
export class BodyClock {
  readonly #ms: number;
  readonly #tickMs: number;
  /** Ticks a read may take, plus the one it started in. */
  readonly #ticks: number;
  /** The pending reads, oldest first, in a circle through this node. */
  readonly #list = new Watched();
  #tick = 0;
  /** Whether a read was watched since the last tick (the timer then keeps running). */
  #busy = false;
  #timer: ReturnType<typeof setInterval> | undefined;

  /**
   * Creates the clock.
   *
   * @param ms How long a body may take.
   */
  constructor(ms: number) {
    this.#ms = ms;
    this.#tickMs = Math.max(10, Math.min(1000, ms / 4));
    this.#ticks = Math.ceil(ms / this.#tickMs) + 1;
  }

  /**
   * The time a body has, in milliseconds.
   *
   * @example
   * ```ts
   * import { BodyClock } from "./_body.ts";
   * if (new BodyClock(30_000).ms !== 30_000) throw new Error("the time given");
   * ```
   */
  get ms(): number {
    return this.#ms;
  }

  /**
   * Calls `expire` once the body's time is up, unless the returned function
   * (the read is over) was called first.
   *
   * @param expire Gives the read up.
   * @returns Ends the watch.
   *
   * @example
   * ```ts
   * import { BodyClock } from "./_body.ts";
   * const clock = new BodyClock(10);
   * const done = clock.watch(() => {
   *   throw new Error("not called: the read ended in time");
   * });
   * done();
   * ```
   */
  watch(expire: () => void): () => void {
    const watched = new WatchedCall(expire);
    this.#add(watched);
    return () => watched.unlink();
  }

  /**
   * Settles as `read` does, or rejects with {@link BodyTimeoutError} once the
   * body's time is up. `then` and `otherwise` are the caller's continuations,
   * as for `read.then(then, otherwise)`, run without a promise of their own
   * (not for the timeout, which rejects as it is).
   *
   * @param read The read (`request.json()`).
   * @param then Maps what the read gives.
   * @param otherwise Maps the read's failure (or throws).
   * @returns What the read gives, mapped.
   *
   * @example
   * ```ts
   * import { BodyClock } from "./_body.ts";
   * const clock = new BodyClock(1_000);
   * if ((await clock.race(Promise.resolve("text"))) !== "text") throw new Error("the read's value");
   * const length = await clock.race(Promise.resolve("text"), (text) => text.length);
   * if (length !== 4) throw new Error("mapped");
   * const failed = await clock.race(Promise.reject(new Error("x")), undefined, () => "refused");
   * if (failed !== "refused") throw new Error("the failure mapped");
   * ```
   */
  race<T, R = T>(
    read: Promise<T>,
    then?: (value: T) => R,
    otherwise?: (error: unknown) => R,
  ): Promise<R> {
    const watched = new WatchedRead(read, this.#ms, then, otherwise);
    this.#add(watched);
    watched.follow();
    return watched.promise;
  }

  #add(watched: Watched): void {
    watched.linkInto(this.#list, this.#tick);
    this.#busy = true;
    if (this.#timer === undefined) {
      this.#timer = setInterval(() => this.#advance(), this.#tickMs);
      (globalThis as { Deno?: { unrefTimer(id: number): void } }).Deno?.unrefTimer(
        this.#timer as unknown as number,
      );
    }
  }

  #advance(): void {
    const due = ++this.#tick - this.#ticks;
    const busy = this.#busy;
    this.#busy = false;
    const list = this.#list;
    for (let watched = list.next; watched !== list; watched = list.next) {
      if (watched.tick > due) break; // started later: not yet due
      watched.unlink();
      watched.expire();
    }
    // Stopped after a tick with no read at all: starting and stopping a
    // timer per request would cost more than the read.
    if (list.next === list && !busy) {
      clearInterval(this.#timer);
      this.#timer = undefined;
    }
  }
}

/** The largest announced body read with `json()`, which reserves its announced length up front. */
const RESERVE_MAX_BYTES = 16 * 1024;

/** The size of the buffer an announced body is read through (at most its length). */
const READ_BUFFER_BYTES = 32 * 1024;

/**
 * Reads a body of an announced length as text, through one buffer of at
 * most 32 KiB that each read fills and the decoder empties, so a slow client
 * holds what it sent, and the body's bytes end up in a string of the
 * JavaScript heap (whose memory the engine returns to the system once
 * collected) rather than in native buffers grown by doubling (which the
 * allocator kept: 200 bodies of 4 MiB left hundreds of megabytes resident
 * after they were answered). The announced length is taken from `budget`
 * before a byte is read, and given back at the end: a body that does not fit
 * is refused before it costs anything, and those that fit are read whole
 * (taking the bytes as they arrived let bodies arriving together each take
 * part and be refused part-read, their bytes then garbage that the heap held
 * until collected).
 */
async function readAnnounced(
  request: Request,
  announced: number,
  clock: BodyClock | undefined,
  budget: ByteBudget | undefined,
  context: RequestContext | undefined,
): Promise<string> {
  if (!request.body) return "";
  if (budget === undefined) return await readAnnouncedText(request.body, announced, clock);
  const client = clientOf(context);
  const refused = budget.take(announced, client);
  if (refused !== undefined) {
    await request.body.cancel().catch(() => {});
    throw budgetError(budget, refused);
  }
  try {
    return await readAnnouncedText(request.body, announced, clock);
  } finally {
    budget.give(announced, client);
  }
}

function budgetError(budget: ByteBudget, refused: RetainedRefusal): BodyBudgetError {
  return new BodyBudgetError(refused, refused === "client" ? budget.perClient : budget.max);
}

async function readAnnouncedText(
  body: ReadableStream<Uint8Array>,
  announced: number,
  clock: BodyClock | undefined,
): Promise<string> {
  // Deno.serve's bodies are byte streams, read into our own buffer; a body
  // that is not (node:http through its adapter) hands out chunks we decode.
  let byob: ReadableStreamBYOBReader | undefined;
  try {
    byob = body.getReader({ mode: "byob" });
  } catch {
    byob = undefined;
  }
  const reader = byob ?? body.getReader();
  let expired = false;
  const done = clock?.watch(() => {
    expired = true;
    reader.cancel().catch(() => {});
  });
  const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
  let buffer = byob && new Uint8Array(Math.min(announced, READ_BUFFER_BYTES));
  let text = "";
  let used = 0;
  try {
    while (used < announced) {
      let chunk: Uint8Array | undefined;
      if (byob) {
        const room = Math.min(buffer!.byteLength, announced - used);
        const { value, done } = await byob.read(buffer!.subarray(0, room));
        if (expired) throw new BodyTimeoutError(clock!.ms);
        if (done || !value) break;
        buffer = new Uint8Array(value.buffer); // the read hands the buffer back
        chunk = value;
      } else {
        const { value, done } = await (reader as ReadableStreamDefaultReader<Uint8Array>).read();
        if (expired) throw new BodyTimeoutError(clock!.ms);
        if (done || !value) break;
        // Past the announced length the body is malformed; keep what was announced.
        chunk = value.subarray(0, announced - used);
      }
      used += chunk.byteLength;
      text += decoder.decode(chunk, { stream: true });
    }
  } finally {
    done?.();
    reader.releaseLock();
  }
  return text + decoder.decode();
}

/**
 * Reads a body without `Content-Length` as text (a byte order mark kept),
 * stopping once it passes `maxBytes`.
 */
async function readUnannounced(
  request: Request,
  maxBytes: number,
  clock: BodyClock | undefined,
  budget: ByteBudget | undefined,
  context: RequestContext | undefined,
): Promise<string | undefined> {
  if (!request.body) return "";
  const reader = request.body.getReader();
  const client = budget && clientOf(context);
  // What the text holds so far is taken from the budget as it arrives (all
  // of it, once past 16 KiB: a small body is not counted, as with `json()`).
  let reserved = 0;
  let expired = false;
  const watching = clock?.watch(() => {
    expired = true;
    reader.cancel().catch(() => {});
  });
  const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
  let text = "";
  let total = 0;
  try {
    while (true) {
      const { value, done } = await reader.read();
      if (expired) throw new BodyTimeoutError(clock!.ms);
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) {
        await reader.cancel().catch(() => {});
        return undefined;
      }
      if (budget !== undefined && total > RESERVE_MAX_BYTES) {
        const refused = budget.take(total - reserved, client);
        if (refused !== undefined) {
          await reader.cancel().catch(() => {});
          throw budgetError(budget, refused);
        }
        reserved = total;
      }
      text += decoder.decode(value, { stream: true });
    }
  } finally {
    watching?.();
    budget?.give(reserved, client);
  }
  return text + decoder.decode();
}
