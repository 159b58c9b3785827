/**
 * Splitting values bigger than one KV value (64 KiB) into parts and joining
 * them back.
 *
 * @module
 */

/**
 * Bytes of payload per KV value: under the 65,536-byte limit with room for
 * the header and the serializer's framing.
 *
 * @example
 * ```ts
 * import { CHUNK_BYTES } from "@anubis/core/kv";
 * import assert from "node:assert/strict";
 * assert.equal(CHUNK_BYTES < 65_536, true);
 * ```
 */
export const CHUNK_BYTES = 60 * 1024;

/**
 * Splits bytes into parts of at most `size` bytes; there is always at least
 * one part (empty for empty input). The parts are views, not copies.
 *
 * @param bytes The value.
 * @param size The part size.
 * @returns The parts.
 *
 * @example
 * ```ts
 * import { splitBytes } from "./chunks.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(splitBytes(new Uint8Array(5), 2).map((p) => p.length), [ 2, 2, 1 ]);
 * ```
 */
export function splitBytes(bytes: Uint8Array, size: number = CHUNK_BYTES): Uint8Array[] {
  const parts: Uint8Array[] = [];
  for (let offset = 0; offset < bytes.length; offset += size) {
    parts.push(bytes.subarray(offset, offset + size));
  }
  return parts.length > 0 ? parts : [bytes];
}

/**
 * Concatenates parts.
 *
 * @param parts The parts, in order.
 * @returns One array.
 *
 * @example
 * ```ts
 * import { joinBytes } from "@anubis/core/kv";
 * import assert from "node:assert/strict";
 * assert.deepEqual(joinBytes([new Uint8Array([1]), new Uint8Array([2, 3])]), new Uint8Array([1, 2, 3]));
 * ```
 */
export function joinBytes(parts: readonly Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0];
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}
