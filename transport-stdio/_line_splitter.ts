/**
 * Splits a byte stream into newline-delimited lines without copying a long
 * line more than once.
 *
 * @module
 */

/**
 * One line (as bytes, or as text when {@link LineSplitter.pushText} could
 * decode its chunk), or a line that was dropped for being longer than the limit.
 *
 * @example
 * ```ts
 * import type { Line } from "./_line_splitter.ts";
 * const line: Line = { bytes: new Uint8Array([123, 125]) };
 * ```
 */
export type Line = { bytes: Uint8Array } | { text: string } | { tooLong: number };

// A byte order mark is kept: a line that starts with one is not JSON text (-32700),
// as on HTTP.
const lenient = new TextDecoder("utf-8", { ignoreBOM: true });

/**
 * Splits chunks on `\n` (a trailing `\r` is removed). A line longer than
 * `maxLineBytes` is skipped up to its newline and reported as `tooLong`.
 *
 * @example
 * ```ts
 * import { LineSplitter } from "./_line_splitter.ts";
 * import assert from "node:assert/strict";
 * const splitter = new LineSplitter(1024);
 * const lines = splitter.push(new TextEncoder().encode('{"a":1}\n{"b"'));
 * assert.equal(lines.length, 1);
 * assert.equal(splitter.push(new TextEncoder().encode(":2}\n")).length, 1);
 * ```
 */
export class LineSplitter {
  #parts: Uint8Array[] = [];
  #size = 0;
  #skipping = false;
  #maxLineBytes: number;

  /**
   * Creates the instance.
   *
   * @param maxLineBytes The longest line accepted.
   */
  constructor(maxLineBytes: number) {
    this.#maxLineBytes = maxLineBytes;
  }

  /**
   * Feeds a chunk.
   *
   * @param chunk The bytes read.
   * @returns The lines completed by this chunk.
   *
   * @example
   * ```ts
   * import { LineSplitter } from "./_line_splitter.ts";
   * import assert from "node:assert/strict";
   * const splitter = new LineSplitter(8);
   * const lines = splitter.push(new TextEncoder().encode("ping\r\n0123456789\npo"));
   * assert.deepEqual(lines.map((line) => "bytes" in line ? new TextDecoder().decode(line.bytes) : line), [ "ping", { tooLong: 10 } ]);
   * ```
   */
  push(chunk: Uint8Array): Line[] {
    const lines: Line[] = [];
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(10, start);
      const end = newline === -1 ? chunk.length : newline;
      this.#append(chunk.subarray(start, end));
      if (newline === -1) break;
      const line = this.#take();
      if (line) lines.push(line);
      start = newline + 1;
    }
    return lines;
  }

  /**
   * Feeds a chunk, decoding the complete lines in it with one UTF-8 decode
   * instead of one per line. Lines come back as text, except where the chunk
   * holds invalid UTF-8 or could hold a line over the limit: those come back
   * as `push` gives them, so each line is judged on its own.
   *
   * @param chunk The bytes read.
   * @returns The lines completed by this chunk.
   *
   * @example
   * ```ts
   * import { LineSplitter } from "./_line_splitter.ts";
   * import assert from "node:assert/strict";
   * const splitter = new LineSplitter(1024);
   * assert.deepEqual(splitter.pushText(new TextEncoder().encode('{"a":1}\r\n{"b":2}\n')), [ { text: '{"a":1}' }, { text: '{"b":2}' } ]);
   * ```
   */
  pushText(chunk: Uint8Array): Line[] {
    let start = 0;
    let lines: Line[] = [];
    if (this.#size > 0 || this.#skipping) {
      // The first newline completes a line begun in an earlier chunk.
      const first = chunk.indexOf(10);
      if (first === -1) return this.push(chunk);
      lines = this.push(chunk.subarray(0, first + 1));
      start = first + 1;
    }
    const last = chunk.lastIndexOf(10);
    if (last >= start) {
      const body = chunk.subarray(start, last + 1);
      let text: string | undefined;
      if (body.length <= this.#maxLineBytes) {
        // The lenient decoder is about five times faster than the fatal one
        // on a chunk of ASCII lines. Invalid UTF-8 shows in its text as
        // U+FFFD: then (or for a U+FFFD the client sent) each line is decoded,
        // and answered, on its own.
        const decoded = lenient.decode(body);
        if (!decoded.includes("\uFFFD")) text = decoded;
      }
      if (text === undefined) {
        for (const line of this.push(body)) lines.push(line);
      } else {
        splitText(text, lines);
      }
      start = last + 1;
    }
    if (start < chunk.length) this.#append(chunk.subarray(start));
    return lines;
  }

  /**
   * The unterminated last line, at end of input.
   *
   * @returns The line, if any.
   *
   * @example
   * ```ts
   * import { LineSplitter } from "./_line_splitter.ts";
   * import assert from "node:assert/strict";
   * const splitter = new LineSplitter(1024);
   * assert.deepEqual(splitter.push(new TextEncoder().encode('{"id":1}')), []);
   * const last = splitter.flush();
   * assert(last && "bytes" in last);
   * assert.equal(new TextDecoder().decode(last.bytes), '{"id":1}');
   * assert.equal(splitter.flush(), undefined);
   * ```
   */
  flush(): Line | undefined {
    return this.#take();
  }

  #append(bytes: Uint8Array): void {
    if (bytes.length === 0) return;
    if (!this.#skipping && this.#size + bytes.length > this.#maxLineBytes) {
      this.#skipping = true;
      this.#parts = [];
    }
    this.#size += bytes.length;
    if (!this.#skipping) this.#parts.push(bytes.slice());
  }

  #take(): Line | undefined {
    const size = this.#size;
    const parts = this.#parts;
    const skipped = this.#skipping;
    this.#parts = [];
    this.#size = 0;
    this.#skipping = false;
    if (skipped) return { tooLong: size };
    if (size === 0) return undefined;
    let bytes: Uint8Array;
    if (parts.length === 1) {
      bytes = parts[0];
    } else {
      bytes = new Uint8Array(size);
      let offset = 0;
      for (const part of parts) {
        bytes.set(part, offset);
        offset += part.length;
      }
    }
    if (bytes[bytes.length - 1] === 13) bytes = bytes.subarray(0, bytes.length - 1);
    return bytes.length === 0 ? undefined : { bytes };
  }
}

/** Splits text that ends with a newline into its non-empty lines. */
function splitText(text: string, lines: Line[]): void {
  let from = 0;
  while (from < text.length) {
    const newline = text.indexOf("\n", from);
    let end = newline;
    if (end > from && text.charCodeAt(end - 1) === 13) end--;
    if (end > from) lines.push({ text: text.slice(from, end) });
    from = newline + 1;
  }
}
