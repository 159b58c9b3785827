/**
 * `@anubis/redis`: the stores and buses that let many instances of an Anubis
 * server, on many hosts, share sessions, resumable streams, tasks and rate
 * limits through one Redis (or a Redis-compatible server such as Valkey), on
 * the `@redis/client` (node-redis) client, under Deno and Node.
 *
 * @example
 * ```ts
 * import { redactRedisUrl } from "@anubis/redis";
 * import assert from "node:assert/strict";
 * assert.equal(redactRedisUrl("redis://app:pw@10.0.0.5:6379"), "redis://app:***@10.0.0.5:6379");
 * ```
 *
 * @module
 */

export {
  openRedis,
  redactRedisUrl,
  RedisConnection,
  type RedisConnectOptions,
  RedisUnavailableError,
} from "./connection.ts";

// Stores: sessions, tasks, rate limits, requestState keys.
export {
  RedisSessionStore,
  type RedisSessionStoreOptions,
  RedisStoreFullError,
} from "./session_store.ts";
export { RedisTaskStore, type RedisTaskStoreOptions } from "./task_store.ts";
export { RedisRateLimitStore, type RedisRateLimitStoreOptions } from "./rate_limit_store.ts";
export { RedisRequestStateKeys, type RedisRequestStateKeysOptions } from "./request_state_keys.ts";

// Resumable streams and the buses between instances.
export { RedisEventStore, type RedisEventStoreOptions } from "./event_store.ts";
export { RedisNotificationBus, type RedisNotificationBusOptions } from "./notification_bus.ts";
