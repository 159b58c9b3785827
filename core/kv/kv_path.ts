/**
 * Where the KV stores keep their data: the path they share by default, and
 * which paths name a local file (whose folder the opener must create). The
 * opening itself (`Deno.openKv`, `Deno.mkdir`) stays in the store packages,
 * so core touches no `Deno` global.
 *
 * @module
 */

/**
 * Where the KV stores keep their data when no path is given (relative to the
 * working directory); the event store and the session store share the file.
 *
 * @example
 * ```ts
 * import { DEFAULT_KV_PATH } from "@anubis/core/kv";
 * import assert from "node:assert/strict";
 * assert.equal(DEFAULT_KV_PATH, ".data/anubis.kv");
 * ```
 */
export const DEFAULT_KV_PATH = ".data/anubis.kv";

/**
 * Whether a path given to `Deno.openKv` names a local file: not `":memory:"`
 * (a private in-memory database) nor an `http(s)://` KV Connect URL (such as
 * self-hosted denokv).
 *
 * @param path What would be passed to `Deno.openKv`.
 * @returns `true` for a file, whose folder must exist before opening.
 *
 * @example
 * ```ts
 * import { isKvFilePath } from "@anubis/core/kv";
 * import assert from "node:assert/strict";
 * assert.equal(isKvFilePath(".data/anubis.kv"), true);
 * assert.equal(isKvFilePath(":memory:"), false);
 * assert.equal(isKvFilePath("https://kv.example.com"), false);
 * ```
 */
export function isKvFilePath(path: string): boolean {
  return path !== ":memory:" && !isKvConnectUrl(path);
}

/**
 * Whether a path given to `Deno.openKv` is a KV Connect URL (`http://` or
 * `https://`): a networked database (self-hosted denokv, Deno Deploy KV) that
 * instances on several hosts share, reached with the access token in
 * `DENO_KV_ACCESS_TOKEN`, with no file, no folder, no SQLite lock, and a
 * `watch()` that sees every instance's writes.
 *
 * @param path What would be passed to `Deno.openKv`.
 * @returns `true` for a KV Connect URL.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isKvConnectUrl } from "@anubis/core/kv";
 * assert.equal(isKvConnectUrl("https://api.deno.com/databases/0e1c7e5a/connect"), true);
 * assert.equal(isKvConnectUrl("http://10.0.0.5:4512"), true);
 * assert.equal(isKvConnectUrl(".data/anubis.kv"), false);
 * ```
 */
export function isKvConnectUrl(path: string): boolean {
  return /^https?:\/\//.test(path);
}
