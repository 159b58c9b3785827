/**
 * `@anubis/core/kv`: the Deno KV plumbing shared by the KV store packages
 * (`@anubis/event-store-kv`, `@anubis/session-kv`), so each depends on core
 * only. Nothing here opens a database or touches the `Deno` global: every
 * function takes an injected `Deno.Kv`-shaped object ({@link KvLike}), a
 * `Deno.Kv` from `Deno.openKv()` or a `Kv` from `npm:@deno/kv` on Node.
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

export * from "./kv_like.ts";
export * from "./kv_retry.ts";
export * from "./chunks.ts";
export * from "./chunked_value.ts";
export * from "./kv_path.ts";
export * from "./request_state_keys.ts";
export * from "./kv_file_watch.ts";
