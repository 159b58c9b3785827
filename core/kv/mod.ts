/**
 * `@anubis/core/kv`: the Deno KV plumbing shared by the KV store packages
 * (`@anubis/event-store-kv`, `@anubis/session-kv`), so each depends on core
 * only. Nothing here opens a database: every function takes an injected
 * `Deno.Kv`-shaped object ({@link KvLike}), a `Deno.Kv` from `Deno.openKv()`
 * or a `Kv` from `npm:@deno/kv` on Node. Only {@link KvFileWatch} (for a
 * server run by Deno) reads the file's metadata, with `Deno.stat`.
 *
 * - {@link KvLike} and its parts: the slice of the `Deno.Kv` API the stores use.
 * - Chunked values ({@link chunkWrites}, {@link readChunked}): values over
 *   one KV value's 64 KiB stored as `Uint8Array` parts that Deno and Node
 *   read alike.
 * - {@link retryLocked}: retrying work that met "database is locked" (another
 *   process committing to the same file), with jittered {@link backoff}.
 * - {@link DEFAULT_KV_PATH}: the file the stores share when no path is given.
 * - {@link SharedRequestStateKeys}: one `requestState` key for every instance
 *   on the database, created atomically, rotated with a window.
 * - {@link KvFileWatch}: a served KV file removed, replaced or made read-only
 *   is reported, and the stores refuse to work on it ({@link KvUnavailableError}).
 *
 * @example
 * ```ts
 * import { chunkWrites, type KvLike, readChunked, retryLocked } from "@anubis/core/kv";
 * import assert from "node:assert/strict";
 * const kv: KvLike = await Deno.openKv(":memory:");
 * const op = kv.atomic();
 * for (const w of chunkWrites(["doc"], { v: 1 }, new Uint8Array(100_000))) op.set(w.key, w.value);
 * await retryLocked(() => op.commit());
 * const value = await retryLocked(() => readChunked<{ v: number }>(kv, ["doc"]));
 * assert.equal(value?.header.v, 1);
 * assert.equal(value?.bytes.length, 100000);
 * kv.close();
 * ```
 *
 * @module
 */

export type {
  KvAtomic,
  KvEntry,
  KvEntryMaybe,
  KvKey,
  KvKeyPart,
  KvLike,
  KvU64Like,
} from "./kv_like.ts";
export { backoff, isLockedError, retryLocked } from "./kv_retry.ts";
export { CHUNK_BYTES, joinBytes } from "./chunks.ts";
export {
  type ChunkedValue,
  type ChunkHeader,
  type ChunkWrite,
  chunkWrites,
  MAX_PARTS_PER_COMMIT,
  readChunked,
  readHead,
} from "./chunked_value.ts";
export { DEFAULT_KV_PATH, isKvConnectUrl, isKvFilePath } from "./kv_path.ts";
export {
  type KeysCell,
  PREVIOUS_SECRET_WINDOW_MS,
  RotatingKeys,
  type RotatingKeysOptions,
  SharedRequestStateKeys,
  type SharedRequestStateKeysOptions,
} from "./request_state_keys.ts";
export { KvFileWatch, type KvFileWatchOptions, KvUnavailableError } from "./kv_file_watch.ts";
