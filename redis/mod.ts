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
export { RedisEventStore, type RedisEventStoreOptions } from "./event_store.ts";
export { RedisNotificationBus, type RedisNotificationBusOptions } from "./notification_bus.ts";
