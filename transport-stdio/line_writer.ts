/**
 * Writes newline-delimited JSON messages to a byte stream, coalescing the
 * messages produced while a write is in flight into the next write.
 *
 * @module
 */

const encoder = new TextEncoder();

/**
 * Writes each message as one JSON line. Messages written in the same turn of
 * the event loop leave together in one write, and messages written while a
 * write is in flight wait in one string and leave together, as whole lines,
 * in the next write once the stream accepted the previous one (so
 * backpressure still holds). After a failed write the stream counts as
 * broken and later messages are dropped.
 *
 * @example
 * ```ts
 * import { LineWriter } from "@anubis/transport-stdio";
 * const chunks: string[] = [];
 * const stream = new WritableStream<Uint8Array>({
 *   write: (chunk) => void chunks.push(new TextDecoder().decode(chunk)),
 * });
 * const writer = new LineWriter(stream.getWriter());
 * writer.write({ id: 1 });
 * await writer.write({ id: 2 });
 * await writer.write({ id: 3 });
 * console.log(chunks); // [ '{"id":1}\n{"id":2}\n', '{"id":3}\n' ]
 * ```
 */
export class LineWriter {
  #writer: WritableStreamDefaultWriter<Uint8Array>;
  #pending = "";
  #flushing: Promise<void> | undefined;
  #broken = false;

  /**
   * Creates the instance.
   *
   * @param writer The stream's writer; the caller closes or releases it.
   */
  constructor(writer: WritableStreamDefaultWriter<Uint8Array>) {
    this.#writer = writer;
  }

  /** Whether a write failed, so messages are being dropped. */
  get broken(): boolean {
    return this.#broken;
  }

  /**
   * Queues a message as one line.
   *
   * @param message Any JSON value.
   * @returns Resolves once the write that carries the message is done (or failed).
   */
  write(message: unknown): Promise<void> {
    if (this.#broken) return Promise.resolve();
    this.#pending += JSON.stringify(message) + "\n";
    return this.#flushing ??= this.#flush();
  }

  /**
   * Waits until every queued message was written.
   *
   * @returns Resolves when nothing is queued or in flight.
   */
  drained(): Promise<void> {
    return this.#flushing ?? Promise.resolve();
  }

  async #flush(): Promise<void> {
    // One microtask first: the answers of requests read together finish in
    // the same turn, and leave in the same write.
    await undefined;
    try {
      while (this.#pending !== "") {
        const text = this.#pending;
        this.#pending = "";
        await this.#writer.write(encoder.encode(text));
      }
    } catch {
      this.#broken = true;
      this.#pending = "";
    } finally {
      this.#flushing = undefined;
    }
  }
}
