/**
 * Splits a byte stream into newline-delimited lines without copying a long
 * line more than once.
 *
 * @module
 */

/**
 * One line, or a line that was dropped for being longer than the limit.
 *
 * @example
 * ```ts
 * import type { Line } from "@anubis/transport-stdio";
 * const line: Line = { bytes: new Uint8Array([123, 125]) };
 * ```
 */
export type Line = { bytes: Uint8Array } | { tooLong: number };

/**
 * Splits chunks on `\n` (a trailing `\r` is removed). A line longer than
 * `maxLineBytes` is skipped up to its newline and reported as `tooLong`.
 *
 * @example
 * ```ts
 * import { LineSplitter } from "@anubis/transport-stdio";
 * const splitter = new LineSplitter(1024);
 * const lines = splitter.push(new TextEncoder().encode('{"a":1}\n{"b"'));
 * console.log(lines.length); // 1
 * console.log(splitter.push(new TextEncoder().encode(":2}\n")).length); // 1
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
   * The unterminated last line, at end of input.
   *
   * @returns The line, if any.
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
