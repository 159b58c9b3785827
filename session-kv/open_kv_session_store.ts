/**
 * Opening a KV file and a {@link KvSessionStore} on it in one call (Deno),
 * for `--session-store kv[:PATH]`.
 *
 * @module
 */

import { DEFAULT_KV_PATH, openKvPath } from "@anubis/event-store-kv";
import { KvSessionStore, type KvSessionStoreOptions } from "./kv_session_store.ts";

/**
 * Opens the KV database at `path` (default `.data/anubis.kv`, shared with
 * `@anubis/event-store-kv`; its folder is created) and returns a session
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
 * const sessions = await openKvSessionStore(":memory:");
 * console.log(await sessions.load("nobody")); // undefined
 * sessions.close();
 * ```
 */
export async function openKvSessionStore(
  path: string = DEFAULT_KV_PATH,
  options: Omit<KvSessionStoreOptions, "closeKv"> = {},
): Promise<KvSessionStore> {
  return new KvSessionStore(await openKvPath(path), {
    ...options,
    closeKv: true,
  });
}
