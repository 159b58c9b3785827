/**
 * An SSE response body: a `ReadableStream` the transport writes encoded
 * events into, with keep-alive comments, a bound on unread bytes, and a
 * signal that fires when the client goes away.
 *
 * @module
 */

import { encodeSseComment } from "./_sse_encoding.ts";

/**
 * Options of an {@link SseStream}.
 *
 * @example
 * ```ts
 * import type { SseStreamOptions } from "./_sse_stream.ts";
 * const options: SseStreamOptions = { keepAliveMs: 15_000 };
 * ```
 */
export interface SseStreamOptions {
  /** Send a `: keepalive` comment this often; 0 or absent sends none. */
  keepAliveMs?: number;
  /**
   * Close the stream when the client leaves more than this many bytes unread
   * (default 4 MiB). Unread bytes are packed into 64 KiB blocks, so what a
   * stream whose client stopped reading holds is this budget plus one block
   * and the small queue the response is read from, not a chunk per event.
   */
  maxBufferedBytes?: number;
}

/** The size of the blocks unread events are packed into. */
const BLOCK_BYTES = 64 * 1024;

const KEEPALIVE = encodeSseComment("keepalive");

/**
 * The response headers of every SSE stream.
 *
 * @example
 * ```ts
 * import { SSE_HEADERS } from "./_sse_stream.ts";
 * import assert from "node:assert/strict";
 * assert.equal(SSE_HEADERS["content-type"], "text/event-stream");
 * ```
 */
export const SSE_HEADERS: Readonly<Record<string, string>> = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache, no-transform",
  "x-accel-buffering": "no",
};

/**
 * A writable SSE body. Writes after the stream ended are ignored.
 *
 * @example
 * ```ts
 * import { encodeSseMessage } from "./_sse_encoding.ts";
 * import { SseStream } from "./_sse_stream.ts";
 * import assert from "node:assert/strict";
 * const stream = new SseStream();
 * stream.write(encodeSseMessage('{"jsonrpc":"2.0","method":"ping"}'));
 * stream.close();
 * assert.equal((await new Response(stream.readable).text()).includes("ping"), true);
 * ```
 */
export class SseStream {
  /**
   * The response body.
   *
   * @example
   * ```ts
   * import { encodeSseMessage } from "./_sse_encoding.ts";
   * import { SseStream } from "./_sse_stream.ts";
   * import assert from "node:assert/strict";
   * const stream = new SseStream();
   * stream.write(encodeSseMessage('{"jsonrpc":"2.0","method":"ping"}', 1));
   * stream.close();
   * assert.equal(
   *   await new Response(stream.readable).text(),
   *   'id: 1\nevent: message\ndata: {"jsonrpc":"2.0","method":"ping"}\n\n',
   * );
   * ```
   */
  readonly readable: ReadableStream<Uint8Array>;
  readonly #ended = new AbortController();
  #controller!: ReadableStreamDefaultController<Uint8Array>;
  #timer?: ReturnType<typeof setInterval>;
  readonly #maxBuffered: number;
  /** Whether the reader asked for bytes that nothing has been written for yet. */
  #wanted = false;
  /** Bytes written while the reader was not asking, packed into blocks (the last one filling). */
  #blocks: Uint8Array[] = [];
  #lastUsed = 0;
  #unread = 0;

  /**
   * Creates the stream.
   *
   * @param options Keep-alive and buffering.
   */
  constructor(options: SseStreamOptions = {}) {
    this.#maxBuffered = options.maxBufferedBytes ?? 4 * 1024 * 1024;
    this.readable = new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.#controller = controller;
      },
      pull: () => this.#pull(),
      cancel: () => this.#end(false),
    }, new ByteLengthQueuingStrategy({ highWaterMark: BLOCK_BYTES }));
    if (options.keepAliveMs && options.keepAliveMs > 0) {
      this.#timer = setInterval(() => this.write(KEEPALIVE), options.keepAliveMs);
    }
  }

  /**
   * Aborts when the stream ended: closed by the server or cancelled by the client.
   *
   * @example
   * ```ts
   * import { SseStream } from "./_sse_stream.ts";
   * import assert from "node:assert/strict";
   * const stream = new SseStream();
   * assert.equal(stream.signal.aborted, false);
   * await stream.readable.cancel(); // the client went away
   * assert.equal(stream.signal.aborted, true);
   * ```
   */
  get signal(): AbortSignal {
    return this.#ended.signal;
  }

  /**
   * Whether writes still reach the client.
   *
   * @example
   * ```ts
   * import { SseStream } from "./_sse_stream.ts";
   * import assert from "node:assert/strict";
   * const stream = new SseStream();
   * assert.equal(stream.open, true);
   * stream.close();
   * assert.equal(stream.open, false);
   * ```
   */
  get open(): boolean {
    return !this.#ended.signal.aborted;
  }

  /**
   * Enqueues bytes.
   *
   * @param bytes Encoded events or comments.
   * @returns `false` when the stream has ended (or just ended because the client reads too slowly).
   *
   * @example
   * ```ts
   * import { encodeSseComment } from "./_sse_encoding.ts";
   * import { SseStream } from "./_sse_stream.ts";
   * import assert from "node:assert/strict";
   * const stream = new SseStream({ maxBufferedBytes: 1024 });
   * assert.equal(stream.write(encodeSseComment("hi")), true);
   * // Nobody reads: beyond `maxBufferedBytes` unread the stream ends.
   * assert.equal(stream.write(encodeSseComment("x".repeat(2_000))), false);
   * assert.equal(stream.open, false);
   * ```
   */
  write(bytes: Uint8Array): boolean {
    if (!this.open) return false;
    if (this.#wanted) {
      // The reader keeps up: hand the bytes over as they are.
      this.#wanted = false;
      try {
        this.#controller.enqueue(bytes);
      } catch {
        this.#end(false);
        return false;
      }
      return true;
    }
    this.#unread += bytes.byteLength;
    if (this.#unread > this.#maxBuffered) {
      this.#end(true);
      return false;
    }
    this.#pack(bytes);
    return true;
  }

  /** Copies bytes into the blocks, starting a new block when the last is full. */
  #pack(bytes: Uint8Array): void {
    let offset = 0;
    while (offset < bytes.byteLength) {
      let last = this.#blocks.at(-1);
      if (!last || this.#lastUsed === last.byteLength) {
        last = new Uint8Array(Math.max(BLOCK_BYTES, bytes.byteLength - offset));
        this.#blocks.push(last);
        this.#lastUsed = 0;
      }
      const take = Math.min(last.byteLength - this.#lastUsed, bytes.byteLength - offset);
      last.set(bytes.subarray(offset, offset + take), this.#lastUsed);
      this.#lastUsed += take;
      offset += take;
    }
  }

  /** The reader wants bytes: the packed ones if any, else the next write. */
  #pull(): void {
    if (this.#blocks.length === 0) this.#wanted = true;
    else this.#flush();
  }

  /** Moves the packed blocks into the response's queue. */
  #flush(): void {
    if (this.#blocks.length === 0) return;
    const blocks = this.#blocks;
    const lastUsed = this.#lastUsed;
    this.#blocks = [];
    this.#lastUsed = 0;
    this.#unread = 0;
    for (let i = 0; i < blocks.length; i++) {
      const block = blocks[i];
      this.#controller.enqueue(i === blocks.length - 1 ? block.subarray(0, lastUsed) : block);
    }
  }

  /**
   * Ends the stream after what was written (and stops its keep-alive timer).
   *
   * @example
   * ```ts
   * import { encodeSseComment } from "./_sse_encoding.ts";
   * import { SseStream } from "./_sse_stream.ts";
   * import assert from "node:assert/strict";
   * const stream = new SseStream({ keepAliveMs: 15_000 });
   * stream.write(encodeSseComment("last"));
   * stream.close();
   * assert.equal(stream.write(encodeSseComment("late")), false);
   * assert.equal(await new Response(stream.readable).text(), ": last\n\n");
   * ```
   */
  close(): void {
    this.#end(true);
  }

  /**
   * The streaming response.
   *
   * @param headers Extra headers.
   * @returns A 200 `text/event-stream` response.
   *
   * @example
   * ```ts
   * import { SseStream } from "./_sse_stream.ts";
   * import assert from "node:assert/strict";
   * const stream = new SseStream();
   * const response = stream.response({ "mcp-session-id": "s1" });
   * assert.equal(response.headers.get("content-type"), "text/event-stream");
   * assert.equal(response.headers.get("mcp-session-id"), "s1");
   * await response.body?.cancel();
   * assert.equal(stream.open, false);
   * ```
   */
  response(headers?: Record<string, string>): Response {
    return new Response(this.readable, {
      status: 200,
      headers: headers ? { ...SSE_HEADERS, ...headers } : SSE_HEADERS,
    });
  }

  #end(closeBody: boolean): void {
    if (!this.open) return;
    clearInterval(this.#timer);
    this.#ended.abort();
    if (closeBody) {
      try {
        this.#flush(); // What was written is read before the end.
        this.#controller.close();
      } catch {
        // Already cancelled by the reader.
      }
    }
  }
}
