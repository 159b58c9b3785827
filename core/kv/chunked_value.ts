/**
 * A value of any size stored as KV entries: a head at `key` holding a small
 * JSON header and the first part of the bytes, and further parts at
 * `[...key, 1]`, `[...key, 2]`, …, all `Uint8Array` so Deno and Node can
 * read what the other wrote.
 *
 * @module
 */

import { CHUNK_BYTES, joinBytes, splitBytes } from "./chunks.ts";
import type { KvKey, KvLike } from "./kv_like.ts";

/**
 * Parts one atomic commit can carry: 12 × 60 KiB stays under KV's 819,200-byte
 * total mutation size with room for a few small mutations beside them.
 *
 * @example
 * ```ts
 * import { MAX_PARTS_PER_COMMIT } from "@anubis/core/kv";
 * import assert from "node:assert/strict";
 * assert.equal(MAX_PARTS_PER_COMMIT, 12);
 * ```
 */
export const MAX_PARTS_PER_COMMIT = 12;

/**
 * The JSON header of a chunked value; `parts` counts the head.
 *
 * @example
 * ```ts
 * import type { ChunkHeader } from "@anubis/core/kv";
 * const header: ChunkHeader = { parts: 1, at: 0 };
 * ```
 */
export interface ChunkHeader {
  /** How many entries hold the bytes (1 = only the head). */
  parts: number;
  /** Any JSON fields the store adds. */
  [field: string]: unknown;
}

/**
 * One write of a chunked value.
 *
 * @example
 * ```ts
 * import type { ChunkWrite } from "@anubis/core/kv";
 * const write: ChunkWrite = { key: ["k"], value: new Uint8Array() };
 * ```
 */
export interface ChunkWrite {
  /** The key. */
  key: KvKey;
  /** The bytes to store. */
  value: Uint8Array;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * The writes that store `bytes` with `header` at `key` (the head first).
 *
 * @param key The head key.
 * @param header Extra header fields (`parts` is filled in).
 * @param bytes The value.
 * @returns The writes.
 *
 * @example
 * ```ts
 * import { chunkWrites } from "@anubis/core/kv";
 * import assert from "node:assert/strict";
 * const writes = chunkWrites(["v"], { at: 1 }, new Uint8Array(70_000));
 * assert.deepEqual(writes.map((w) => w.key), [ [ "v" ], [ "v", 1 ] ]);
 * ```
 */
export function chunkWrites(
  key: KvKey,
  header: object,
  bytes: Uint8Array,
): ChunkWrite[] {
  const parts = splitBytes(bytes, CHUNK_BYTES);
  const json = encoder.encode(JSON.stringify({ ...header, parts: parts.length }));
  const head = new Uint8Array(4 + json.length + parts[0].length);
  new DataView(head.buffer).setUint32(0, json.length);
  head.set(json, 4);
  head.set(parts[0], 4 + json.length);
  return [
    { key, value: head },
    ...parts.slice(1).map((value, i) => ({ key: [...key, i + 1], value })),
  ];
}

/**
 * Reads a head written by {@link chunkWrites}.
 *
 * @typeParam H The header fields the writer added.
 * @param head The head's bytes.
 * @returns The header and the first part.
 * @throws {TypeError} When the bytes are not a head.
 *
 * @example
 * ```ts
 * import { chunkWrites, readHead } from "@anubis/core/kv";
 * import assert from "node:assert/strict";
 * const [head] = chunkWrites(["v"], { at: 5 }, new TextEncoder().encode("hi"));
 * assert.deepEqual(readHead(head.value).header, { at: 5, parts: 1 });
 * ```
 */
export function readHead<H extends object = Record<string, unknown>>(
  head: Uint8Array,
): { header: H & ChunkHeader; first: Uint8Array } {
  if (!(head instanceof Uint8Array) || head.length < 4) {
    throw new TypeError("Not a chunked value head");
  }
  const length = new DataView(head.buffer, head.byteOffset, head.byteLength).getUint32(0);
  const header = JSON.parse(decoder.decode(head.subarray(4, 4 + length))) as H & ChunkHeader;
  return { header, first: head.subarray(4 + length) };
}

/**
 * A chunked value as read.
 *
 * @typeParam H The header fields the writer added.
 *
 * @example
 * ```ts
 * import type { ChunkedValue } from "@anubis/core/kv";
 * const value: ChunkedValue = { header: { parts: 1 }, bytes: new Uint8Array(), versionstamp: "00000000000000010000" };
 * ```
 */
export interface ChunkedValue<H extends object = Record<string, unknown>> {
  /** The header. */
  header: H & ChunkHeader;
  /** The whole value. */
  bytes: Uint8Array;
  /** The head's versionstamp: check it to replace the value atomically. */
  versionstamp: string;
}

/**
 * Reads a chunked value back. The head is read again after its parts, and
 * the read repeated if it changed, so a value rewritten meanwhile never comes
 * back mixed from two versions.
 *
 * @typeParam H The header fields the writer added.
 * @param kv The database.
 * @param key The head key.
 * @returns The value, or `undefined` when the head is missing or a part is
 *   gone (a value deleted while it was being read).
 *
 * @example
 * ```ts
 * import { chunkWrites, readChunked } from "@anubis/core/kv";
 * import assert from "node:assert/strict";
 * const kv = await Deno.openKv(":memory:");
 * const op = kv.atomic();
 * for (const w of chunkWrites(["v"], {}, new Uint8Array(100_000))) op.set(w.key, w.value);
 * await op.commit();
 * assert.equal((await readChunked(kv, ["v"]))?.bytes.length, 100000);
 * kv.close();
 * ```
 */
export async function readChunked<H extends object = Record<string, unknown>>(
  kv: KvLike,
  key: KvKey,
): Promise<ChunkedValue<H> | undefined> {
  for (;;) {
    const head = await kv.get<Uint8Array>(key);
    if (head.value === null) return undefined;
    const { header, first } = readHead<H>(head.value);
    if (header.parts === 1) return { header, bytes: first, versionstamp: head.versionstamp! };
    const parts = [first];
    for await (const entry of kv.list<Uint8Array>({ prefix: key })) parts.push(entry.value);
    if ((await kv.get(key)).versionstamp !== head.versionstamp) continue;
    return parts.length === header.parts
      ? { header, bytes: joinBytes(parts), versionstamp: head.versionstamp! }
      : undefined;
  }
}
