/**
 * `@anubis/session-kv`: a Deno KV `SessionStore` that persists legacy
 * sessions (protocol version, client info and capabilities, log level,
 * resource subscriptions, serialized assigns) with a sliding TTL, so any
 * instance sharing the database can restore them; and a `RateLimitStore`
 * whose per-caller buckets those instances share. Works on Deno and, with
 * `npm:@deno/kv`, on Node.
 *
 * @example
 * ```ts
 * import { KvSessionStore } from "@anubis/session-kv";
 * import assert from "node:assert/strict";
 * const kv = await Deno.openKv(":memory:");
 * const sessions = new KvSessionStore(kv);
 * await sessions.touch("unknown", 60_000); // ignored
 * assert.equal(await sessions.load("unknown"), undefined);
 * kv.close();
 * ```
 *
 * @module
 */

export { KvSessionStore, type KvSessionStoreOptions } from "./kv_session_store.ts";
export { openKvSessionStore } from "./open_kv_session_store.ts";
export { KvTaskStore, type KvTaskStoreOptions } from "./kv_task_store.ts";
export { KvRateLimitStore, type KvRateLimitStoreOptions } from "./kv_rate_limit_store.ts";
