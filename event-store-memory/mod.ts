/**
 * `@anubis/event-store-memory`: a bounded in-memory `EventStore` for
 * Streamable HTTP resumability within one process (`eventStore: new MemoryEventStore()`).
 *
 * @example
 * ```ts
 * import { MemoryEventStore } from "@anubis/event-store-memory";
 * import assert from "node:assert/strict";
 * const store = new MemoryEventStore({ maxEventsPerSession: 1_000, ttlMs: 15 * 60_000 });
 * const id = await store.append("session-a", '{"jsonrpc":"2.0","method":"notifications/message"}');
 * assert.equal(id, 1);
 * assert.equal(await store.latestId("session-a"), 1);
 * ```
 *
 * @module
 */

export { MemoryEventStore, type MemoryEventStoreOptions } from "./memory_event_store.ts";
