/**
 * Writes newline-delimited JSON messages to a byte stream, coalescing the
 * messages produced while a write is in flight into the next write.
 *
 * @module
 */

import {
  encodeOutbound,
  type JsonRpcMessage,
  type UnencodableMessage,
  unsentRequestError,
} from "@anubis/core/engine";

const encoder = new TextEncoder();
const DONE: Promise<void> = Promise.resolve();
/** A promise and its resolve (`Promise.withResolvers` is not in Node 20). */
interface Deferred {
  promise: Promise<void>;
  resolve: () => void;
}

function deferred(): Deferred {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** The reused buffer's size: about a pipe's capacity; longer writes get their own. */
const REUSED_CHUNK_BYTES = 64 * 1024;

/**
 * Options of {@link LineWriter}.
 *
 * @example
 * ```ts
 * import type { LineWriterOptions } from "./_line_writer.ts";
 * const options: LineWriterOptions = { highWaterMark: 1024 * 1024 };
 * ```
 */
export interface LineWriterOptions {
  /**
   * How much unwritten output (in UTF-16 code units, about bytes for JSON)
   * makes the writer {@link LineWriter.full} (default 4 MiB).
   */
  highWaterMark?: number;
  /**
   * Told about each message JSON could not encode: a response went out as a
   * `-32603` error for its id, anything else was dropped.
   */
  onUnencodable?: (problem: UnencodableMessage) => void;
  /**
   * Whether the stream is done with each chunk once its write settles, as the
   * process's stdout on Deno is (default `false`): then every write is
   * encoded into one reused buffer, instead of a new one per write. A stream
   * that keeps its chunks (a `TransformStream`'s writable side, a sink that
   * queues them) must leave this off.
   */
  reusableChunks?: boolean;
}

/**
 * Writes each message as one JSON line. Messages written in the same turn of
 * the event loop leave together in one write, and messages written while a
 * write is in flight wait in one string and leave together, as whole lines,
 * in the next write once the stream accepted the previous one. The writer
 * counts what it holds: past the high-water mark it is `full`, and `ready`
 * resolves once the stream took enough of it, so a reader can stop taking
 * work while nobody drains the output. A message JSON cannot encode never
 * throws (see `encodeOutbound` in `@anubis/core`). After a failed write the
 * stream counts as broken and later messages are dropped.
 *
 * @example
 * ```ts
 * import { LineWriter } from "./_line_writer.ts";
 * import assert from "node:assert/strict";
 * const chunks: string[] = [];
 * const stream = new WritableStream<Uint8Array>({
 *   write: (chunk) => void chunks.push(new TextDecoder().decode(chunk)),
 * });
 * const writer = new LineWriter(stream.getWriter());
 * writer.write({ jsonrpc: "2.0", id: 1, result: {} });
 * await writer.write({ jsonrpc: "2.0", id: 2, result: {} });
 * await writer.write({ jsonrpc: "2.0", id: 3, result: { n: 1n } });
 * assert.equal(chunks.length, 2);
 * assert.equal(JSON.parse(chunks[1]).error.code, -32603);
 * ```
 */
export class LineWriter {
  #writer: WritableStreamDefaultWriter<Uint8Array>;
  #pending = "";
  /** Code units queued or in flight. */
  #buffered = 0;
  #highWaterMark: number;
  #onUnencodable: ((problem: UnencodableMessage) => void) | undefined;
  #flushing: Promise<void> | undefined;
  #ready: Deferred | undefined;
  #broken = false;
  #corked = false;
  /** The buffer every write is encoded into, when the stream lets chunks be reused. */
  #chunk: Uint8Array | undefined;
  /** Settles when the write that carries the messages queued while corked is done. */
  #uncorked: Deferred | undefined;

  /**
   * Creates the instance.
   *
   * @param writer The stream's writer; the caller closes or releases it.
   * @param options The high-water mark and the report of unencodable messages.
   */
  constructor(writer: WritableStreamDefaultWriter<Uint8Array>, options: LineWriterOptions = {}) {
    this.#writer = writer;
    this.#highWaterMark = options.highWaterMark ?? 4 * 1024 * 1024;
    this.#onUnencodable = options.onUnencodable;
    if (options.reusableChunks) this.#chunk = new Uint8Array(REUSED_CHUNK_BYTES);
  }

  /**
   * Whether a write failed, so messages are being dropped.
   *
   * @example
   * ```ts
   * import { LineWriter } from "./_line_writer.ts";
   * import assert from "node:assert/strict";
   * const stream = new WritableStream<Uint8Array>({
   *   write: () => Promise.reject(new Error("EPIPE")), // the reader went away
   * });
   * const writer = new LineWriter(stream.getWriter());
   * assert.equal(writer.broken, false);
   * await writer.write({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });
   * assert.equal(writer.broken, true);
   * ```
   */
  get broken(): boolean {
    return this.#broken;
  }

  /**
   * The output queued or in flight, in UTF-16 code units.
   *
   * @example
   * ```ts
   * import { LineWriter } from "./_line_writer.ts";
   * import assert from "node:assert/strict";
   * const stream = new WritableStream<Uint8Array>();
   * const writer = new LineWriter(stream.getWriter());
   * const sent = writer.write({ jsonrpc: "2.0", id: 1, result: {} });
   * assert.equal(writer.buffered, 37); // the line and its newline
   * await sent;
   * assert.equal(writer.buffered, 0);
   * ```
   */
  get buffered(): number {
    return this.#buffered;
  }

  /**
   * Whether more than the high-water mark waits to be written.
   *
   * @example
   * ```ts
   * import { LineWriter } from "./_line_writer.ts";
   * import assert from "node:assert/strict";
   * const gate = Promise.withResolvers<void>();
   * const stream = new WritableStream<Uint8Array>({ write: () => gate.promise }); // a reader that stalls
   * const writer = new LineWriter(stream.getWriter(), { highWaterMark: 16 });
   * writer.write({ jsonrpc: "2.0", id: 1, result: {} });
   * assert.equal(writer.full, true);
   * gate.resolve();
   * await writer.drained();
   * assert.equal(writer.full, false);
   * ```
   */
  get full(): boolean {
    return this.#buffered > this.#highWaterMark;
  }

  /**
   * Resolves once the writer is not {@link LineWriter.full} (at once when it is not).
   *
   * @example
   * ```ts
   * import { LineWriter } from "./_line_writer.ts";
   * import assert from "node:assert/strict";
   * const gate = Promise.withResolvers<void>();
   * const stream = new WritableStream<Uint8Array>({ write: () => gate.promise });
   * const writer = new LineWriter(stream.getWriter(), { highWaterMark: 16 });
   * writer.write({ jsonrpc: "2.0", id: 1, result: {} });
   * const ready = writer.ready.then(() => writer.full);
   * gate.resolve(); // the reader caught up
   * assert.equal(await ready, false); // not full once ready
   * ```
   */
  get ready(): Promise<void> {
    if (!this.full) return DONE;
    return (this.#ready ??= deferred()).promise;
  }

  /**
   * Queues a message (or a batch) as one line.
   *
   * @param message The message or batch.
   * @returns Resolves once the write that carries the message is done (or
   * failed); rejects only for a request JSON could not encode, which was not sent.
   *
   * @example
   * ```ts
   * import { LineWriter } from "./_line_writer.ts";
   * import assert from "node:assert/strict";
   * const lines: string[] = [];
   * const stream = new WritableStream<Uint8Array>({
   *   write: (chunk) => void lines.push(new TextDecoder().decode(chunk)),
   * });
   * const writer = new LineWriter(stream.getWriter());
   * await writer.write([
   *   { jsonrpc: "2.0", id: 1, result: {} },
   *   { jsonrpc: "2.0", id: 2, result: {} },
   * ]);
   * assert.equal(lines.join(""), '[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":2,"result":{}}]\n');
   * const request = { jsonrpc: "2.0" as const, id: 3, method: "roots/list", params: { n: 1n } };
   * await assert.rejects(writer.write(request), {
   *   message: "roots/list could not be encoded as JSON, so it was not sent",
   * });
   * ```
   */
  write(message: JsonRpcMessage | readonly JsonRpcMessage[]): Promise<void> {
    if (this.#broken) return DONE;
    const text = encodeOutbound(message, this.#onUnencodable);
    if (text === undefined) {
      // A dropped request would leave its sender waiting for an answer: tell it now.
      const unsent = unsentRequestError(message);
      return unsent ? Promise.reject(unsent) : this.#flushing ?? DONE;
    }
    this.#pending += text + "\n";
    this.#buffered += text.length + 1;
    if (this.#corked) return (this.#uncorked ??= deferred()).promise;
    return this.#flushing ??= this.#flush(true);
  }

  /**
   * Holds the messages written from now on until {@link LineWriter.uncork},
   * which starts their write at once. A reader that answers the messages of
   * one read at once writes them corked, so their answers leave before it
   * reads again (uncorked, a write waits one microtask to gather a turn's
   * messages).
   *
   * @example
   * ```ts
   * import { LineWriter } from "./_line_writer.ts";
   * import assert from "node:assert/strict";
   * const chunks: string[] = [];
   * const stream = new WritableStream<Uint8Array>({
   *   write: (chunk) => void chunks.push(new TextDecoder().decode(chunk)),
   * });
   * const writer = new LineWriter(stream.getWriter());
   * writer.cork();
   * const sent = writer.write({ jsonrpc: "2.0", id: 1, result: {} });
   * writer.write({ jsonrpc: "2.0", id: 2, result: {} });
   * assert.equal(writer.buffered, 74);
   * writer.uncork(); // both lines leave in one write, started now
   * await sent;
   * assert.deepEqual(chunks, [
   *   '{"jsonrpc":"2.0","id":1,"result":{}}\n{"jsonrpc":"2.0","id":2,"result":{}}\n',
   * ]);
   * ```
   */
  cork(): void {
    this.#corked = true;
  }

  /**
   * Ends a {@link LineWriter.cork}: what it held starts to be written now,
   * or right after the write in flight, if there is one.
   *
   * @example
   * ```ts
   * import { LineWriter } from "./_line_writer.ts";
   * import assert from "node:assert/strict";
   * let writes = 0;
   * const stream = new WritableStream<Uint8Array>({ write: () => void writes++ });
   * await new Promise((resolve) => setTimeout(resolve, 0)); // the stream has started
   * const writer = new LineWriter(stream.getWriter());
   * writer.cork();
   * const sent = writer.write({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });
   * await new Promise((resolve) => setTimeout(resolve, 0));
   * assert.equal(writes, 0); // held
   * writer.uncork();
   * assert.equal(writes, 1); // handed to the stream at once
   * await sent;
   * ```
   */
  uncork(): void {
    this.#corked = false;
    const uncorked = this.#uncorked;
    if (!uncorked) return;
    this.#uncorked = undefined;
    // A write in flight takes the held lines into its next write.
    const flushing = this.#flushing ??= this.#flush(false);
    flushing.then(uncorked.resolve);
  }

  /**
   * Waits until every queued message was written.
   *
   * @returns Resolves when nothing is queued or in flight.
   *
   * @example
   * ```ts
   * import { LineWriter } from "./_line_writer.ts";
   * import assert from "node:assert/strict";
   * let written = 0;
   * const stream = new WritableStream<Uint8Array>({
   *   write: (chunk) => void (written += chunk.length),
   * });
   * const writer = new LineWriter(stream.getWriter());
   * writer.write({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });
   * writer.write({ jsonrpc: "2.0", method: "notifications/prompts/list_changed" });
   * await writer.drained();
   * assert.equal(written, 126);
   * assert.equal(writer.buffered, 0);
   * ```
   */
  drained(): Promise<void> {
    return this.#uncorked?.promise ?? this.#flushing ?? DONE;
  }

  async #flush(gather: boolean): Promise<void> {
    // One microtask first: the answers of requests read together finish in
    // the same turn, and leave in the same write.
    if (gather) await undefined;
    try {
      while (this.#pending !== "") {
        const text = this.#pending;
        this.#pending = "";
        await this.#writer.write(this.#encode(text));
        this.#buffered -= text.length;
        if (this.#ready && !this.full) this.#wake();
      }
    } catch {
      this.#broken = true;
      this.#pending = "";
      this.#buffered = 0;
      this.#wake();
    } finally {
      this.#flushing = undefined;
    }
  }

  /** The text as UTF-8: in the reused buffer when it fits (no allocation per write). */
  #encode(text: string): Uint8Array {
    const chunk = this.#chunk;
    if (chunk !== undefined && text.length <= chunk.length) {
      const { read, written } = encoder.encodeInto(text, chunk);
      if (read === text.length) return chunk.subarray(0, written);
    }
    return encoder.encode(text);
  }

  #wake(): void {
    this.#ready?.resolve();
    this.#ready = undefined;
  }
}
