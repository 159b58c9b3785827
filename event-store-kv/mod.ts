/**
 * `@anubis/event-store-kv`: a Deno KV `EventStore` for Streamable HTTP
 * resumability that survives restarts and is shared by every process opening
 * the same database, with atomic per-session id counters, chunked large
 * events, bounded retention and a cross-process live tail; and a notification
 * bus that carries change notifications between instances. Works on Deno and,
 * with `npm:@deno/kv`, on Node.
 *
 * @example
 * ```ts
 * import { KvEventStore } from "@anubis/event-store-kv";
 * import assert from "node:assert/strict";
 * const kv = await Deno.openKv(":memory:");
 * const store = new KvEventStore(kv, { maxEventsPerSession: 1_000, ttlMs: 3_600_000 });
 * assert.equal(await store.append("session-a", '{"jsonrpc":"2.0","method":"ping","id":1}'), 1);
 * kv.close();
 * ```
 *
 * @module
 */

export { COUNTER_GRACE_MS, KvEventStore, type KvEventStoreOptions } from "./kv_event_store.ts";
export { KvNotificationBus, type KvNotificationBusOptions } from "./kv_notification_bus.ts";
export { openKvEventStore, openKvNotificationBus, openKvPath } from "./open_kv_event_store.ts";
export { StoredStreamsBus, type StoredStreamsBusOptions } from "./stored_streams_bus.ts";
