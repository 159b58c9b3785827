/**
 * Opening a KV file and a {@link KvSessionStore} on it in one call (Deno),
 * for `--session-store kv[:PATH]`.
 *
 * @module
 */

import { dirname } from "node:path";
import { DEFAULT_KV_PATH, isKvFilePath } from "@anubis/core/kv";
import { KvSessionStore, type KvSessionStoreOptions } from "./kv_session_store.ts";

/**
 * Opens the KV database at `path` (default {@link DEFAULT_KV_PATH}, shared
 * with `@anubis/event-store-kv`; its folder is created) and returns a session
 * store that owns it (`store.close()` closes the database). Needs
 * `--unstable-kv`. On Node, open the database with `openKv` from
 * `npm:@deno/kv` and pass it to `new KvSessionStore(kv)` instead.
 *
 * @param path The file, `":memory:"` or a KV Connect URL.
 * @param options Store options.
 * @returns The store.
 *
 * @example
 * ```ts
 * import { openKvSessionStore } from "@anubis/session-kv";
 * import assert from "node:assert/strict";
 * const sessions = await openKvSessionStore(":memory:");
 * assert.equal(await sessions.load("nobody"), undefined);
 * sessions.close();
 * ```
 */
export async function openKvSessionStore(
  path: string = DEFAULT_KV_PATH,
  options: Omit<KvSessionStoreOptions, "closeKv"> = {},
): Promise<KvSessionStore> {
  if (isKvFilePath(path)) await Deno.mkdir(dirname(path), { recursive: true });
  return new KvSessionStore(await Deno.openKv(path), { ...options, closeKv: true });
}
