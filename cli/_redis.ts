/**
 * `serve --http --redis URL`: every store and bus that `@anubis/redis`
 * offers, on one connection, built in one place ({@link redisStores}).
 * Loaded only when `--redis` is given, so the CLI pulls the npm Redis client
 * in only then.
 *
 * @module
 */

import type {
  EventStore,
  McpServer,
  NotificationBus,
  SessionRecord,
  SessionStore,
} from "@anubis/core";
import { StoredStreamsBus } from "@anubis/event-store-kv";
import {
  openRedis,
  type RedisConnection,
  RedisEventStore,
  RedisNotificationBus,
} from "@anubis/redis";
import type { SessionBusMessage } from "@anubis/transport-http";

/** The stores and buses on Redis, as `serveHttp` plugs them in. */
export interface RedisStores {
  /** Resumable streams, shared by every instance. */
  eventStore: EventStore;
  /** Changes between instances (list changes, resource updates). */
  changes: RedisNotificationBus;
  /** Session links between instances (answers to server requests, GET stream takeovers). */
  sessionBus: NotificationBus<SessionBusMessage>;
  /** Follows the buses: once it resolves, other instances' messages arrive. */
  start(): Promise<void>;
  /** Closes the buses and the stores' own connections (not `connection`). */
  close(): Promise<void>;
}

/**
 * Every Redis store and bus of `serve --http --redis`, on `connection`.
 * The one place to construct them: stores that join later (sessions, tasks,
 * rate limits, the `requestState` keys) are added here.
 *
 * @param connection The open connection.
 * @param server The server (its name names the bus channels).
 * @returns The stores and buses.
 */
export function redisStores(connection: RedisConnection, server: McpServer): RedisStores {
  const eventStore = new RedisEventStore(connection);
  const changes = new RedisNotificationBus(connection, { channel: server.info.name });
  const sessionBus = new RedisNotificationBus<SessionBusMessage>(connection, {
    channel: `${server.info.name}/sessions`,
  });
  return {
    eventStore,
    changes,
    sessionBus,
    async start() {
      await changes.start();
      await sessionBus.start();
    },
    async close() {
      await changes.close();
      await sessionBus.close();
      await eventStore.close();
    },
  };
}

/** What `serveHttp` holds while serving with `--redis`. */
export interface RedisServing {
  /** The stores and buses. */
  stores: RedisStores;
  /**
   * Joins the server's notifier to the other instances. With a session store
   * that lists its records (a shared one), a change raised here is first
   * recorded in the stored stream of every session this instance did not
   * serve (`StoredStreamsBus`), so a session whose stream was on an instance
   * that died still gets it.
   */
  join(sessionStore: SessionStore | undefined): {
    sessionBus: NotificationBus<SessionBusMessage>;
    leave(): Promise<void>;
  };
  /** Why the instance is not ready (Redis unreachable), for the readiness probe. */
  problem(): string | undefined;
  /** Closes the stores, the buses and the connection. */
  close(): Promise<void>;
}

/** How often the readiness probe's view of Redis is refreshed (a PING), in ms. */
const PROBE_MS = 2_000;

/**
 * Opens `url` and builds the stores; a Redis unreachable at start rejects
 * with `RedisUnavailableError` (the CLI prints it and exits 1). Once serving,
 * a dropped connection is retried and reported as `redis.unavailable` and
 * `redis.recovered` operator events; commands meanwhile fail after their
 * timeout, so no request waits for ever.
 *
 * @param url The `--redis` URL.
 * @param server The server.
 * @returns The stores (the buses followed already).
 */
export async function openRedisStores(url: string, server: McpServer): Promise<RedisServing> {
  const connection = await openRedis(url);
  const stores = redisStores(connection, server);
  // A PING every PROBE_MS: one that fails or goes unanswered for PROBE_MS makes the
  // instance unready (GET /ready answers 503), so a load balancer drains it meanwhile.
  let problem: string | undefined;
  let answered = true;
  const probe = setInterval(() => {
    if (!answered) problem = `Redis at ${connection.url} does not answer`;
    answered = false;
    connection.ping().then(() => {
      answered = true;
      problem = undefined;
    }, (error) => {
      problem = `Redis at ${connection.url} is unreachable: ${(error as Error).message}`;
    });
  }, PROBE_MS);
  const close = async () => {
    clearInterval(probe);
    await stores.close();
    connection.close();
  };
  try {
    await stores.start();
  } catch (error) {
    await close();
    throw error;
  }
  return {
    stores,
    close,
    problem: () => problem,
    join(sessionStore) {
      const listing = sessionStore as { records?: () => AsyncIterable<SessionRecord> } | undefined;
      const records = listing?.records?.bind(listing);
      const recording = records
        ? new StoredStreamsBus(stores.changes, {
          eventStore: stores.eventStore,
          sessions: records,
          capabilities: server.capabilities,
        })
        : undefined;
      const disconnect = server.notify.connect(recording ?? stores.changes);
      return {
        sessionBus: stores.sessionBus,
        async leave() {
          disconnect();
          await recording?.idle();
        },
      };
    },
  };
}
