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
  RateLimitStore,
  SessionRecord,
  SessionStore,
  TaskStore,
} from "@anubis/core";
import { StoredStreamsBus } from "@anubis/event-store-kv";
import {
  openRedis,
  type RedisConnection,
  RedisEventStore,
  RedisNotificationBus,
  RedisRateLimitStore,
  RedisRequestStateKeys,
  RedisSessionStore,
  RedisTaskStore,
} from "@anubis/redis";
import type { SessionBusMessage } from "@anubis/transport-http";

/** The stores and buses on Redis, as `serveHttp` plugs them in. */
export interface RedisStores {
  /** Resumable streams, shared by every instance. */
  eventStore: EventStore;
  /** Sessions, shared by every instance (a session moves between them). */
  sessionStore: RedisSessionStore;
  /** Tasks, polled and cancelled at any instance; its limits count over all of them. */
  taskStore: TaskStore;
  /** The rate-limit buckets, shared by every instance; with `rateLimit` only. */
  rateLimitStore?: RateLimitStore;
  /** Changes between instances (list changes, resource updates). */
  changes: RedisNotificationBus;
  /** Session links between instances (answers to server requests, GET stream takeovers). */
  sessionBus: NotificationBus<SessionBusMessage>;
  /** Follows the buses: once it resolves, other instances' messages arrive. */
  start(): Promise<void>;
  /** Closes the buses and the stores' own connections (not `connection`). */
  close(): Promise<void>;
}

/** What {@link redisStores} needs of the command-line options. */
export interface RedisStoreOptions {
  /** `--max-tasks`, `--max-tasks-per-caller`: on Redis, over every instance together. */
  taskLimits?: { maxTasks?: number; maxTasksPerCaller?: number };
  /** Whether `--rate-limit` is on (the buckets then live on Redis). */
  rateLimit?: boolean;
}

/**
 * Every Redis store and bus of `serve --http --redis`, on `connection`: the
 * one place to construct them. Sessions, tasks, rate-limit buckets, streams
 * and the buses all live on Redis, so `--redis` alone is enough for many
 * instances (the `requestState` keys join in {@link openRedisStores}).
 *
 * @param connection The open connection.
 * @param server The server (its name names the bus channels).
 * @param options The task limits and whether rate limiting is on.
 * @returns The stores and buses.
 */
export function redisStores(
  connection: RedisConnection,
  server: McpServer,
  options: RedisStoreOptions = {},
): RedisStores {
  const eventStore = new RedisEventStore(connection);
  const sessionStore = new RedisSessionStore(connection);
  const taskStore = new RedisTaskStore(connection, options.taskLimits);
  const rateLimitStore = options.rateLimit ? new RedisRateLimitStore(connection) : undefined;
  const changes = new RedisNotificationBus(connection, { channel: server.info.name });
  const sessionBus = new RedisNotificationBus<SessionBusMessage>(connection, {
    channel: `${server.info.name}/sessions`,
  });
  return {
    eventStore,
    sessionStore,
    taskStore,
    rateLimitStore,
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
  join(sessionStore?: SessionStore): {
    sessionBus: NotificationBus<SessionBusMessage>;
    leave(): Promise<void>;
  };
  /**
   * Shares the `requestState` key through Redis (every instance reads and
   * rotates the same one), as `--session-store kv` does through KV; call it
   * when no secret was given. Stopped by {@link close}.
   */
  useRequestStateKeys(): Promise<void>;
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
 * @param options The task limits and whether rate limiting is on.
 * @returns The stores (the buses followed already).
 */
export async function openRedisStores(
  url: string,
  server: McpServer,
  options: RedisStoreOptions = {},
): Promise<RedisServing> {
  const connection = await openRedis(url);
  const stores = redisStores(connection, server, options);
  let stopKeys = () => {};
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
    stopKeys();
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
    async useRequestStateKeys() {
      stopKeys = await new RedisRequestStateKeys(connection).attach(server.requestState);
    },
    join(sessionStore = stores.sessionStore) {
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
