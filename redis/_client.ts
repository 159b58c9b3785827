/**
 * The node-redis client behind a {@link RedisConnection}: private to this
 * package, so the public API names only its own types (the client's types
 * reach into `@types/node`, which documentation tooling cannot follow).
 *
 * @module
 */

import { createClient } from "@redis/client";

/** A connected `@redis/client` client. */
export type RawRedisClient = ReturnType<typeof createClient>;

export { createClient };

const clients = new WeakMap<object, RawRedisClient>();

/** Binds `owner` (a `RedisConnection`) to its client. */
export function bindClient(owner: object, client: RawRedisClient): void {
  clients.set(owner, client);
}

/** The client of a connection made by `openRedis`; throws on anything else. */
export function clientOf(owner: object): RawRedisClient {
  const client = clients.get(owner);
  if (!client) throw new TypeError("not a RedisConnection from openRedis()");
  return client;
}
