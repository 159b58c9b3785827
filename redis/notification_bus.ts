/**
 * A `NotificationBus` (of `@anubis/core`) on Redis: every instance connected
 * to the same Redis hears the changes the others raise.
 *
 * @module
 */

import type { BusMessage, NotificationBus } from "@anubis/core";
import { EventLogBus } from "@anubis/core/engine";
import type { RedisConnection } from "./connection.ts";
import { RedisEventStore } from "./event_store.ts";

/**
 * Options of a {@link RedisNotificationBus}.
 *
 * @example
 * ```ts
 * import type { RedisNotificationBusOptions } from "@anubis/redis";
 * import assert from "node:assert/strict";
 * const options: RedisNotificationBusOptions = { channel: "weather", maxMessages: 500 };
 * assert.equal(options.channel, "weather");
 * ```
 */
export interface RedisNotificationBusOptions {
  /** Key prefix (default `"anubis:bus"`). */
  prefix?: string;
  /** The channel: instances of one server share it (default `"changes"`). */
  channel?: string;
  /** Messages kept for a follower that fell behind (default 1,000). */
  maxMessages?: number;
  /** Age after which a message is dropped, in ms (default 60,000). */
  ttlMs?: number;
  /** The slow poll behind pub/sub wake-ups, in ms (default 1,000). */
  pollIntervalMs?: number;
  /** How long one command may take, in ms (default 5,000). */
  commandTimeoutMs?: number;
}

/** A message as stored: who published it, and what. */
/**
 * Changes between instances through one Redis: a message is appended to the
 * channel's stream (a {@link RedisEventStore} log: atomic ids, bounded,
 * expiring) and every other instance follows it from the id it found at
 * {@link RedisNotificationBus.start}, woken by pub/sub as each message lands,
 * with a slow poll behind. A follower never misses a message still held
 * (one that fell behind reads on from its cursor) and delivers each once, in
 * order; its own messages are recognised by a random origin id and skipped.
 * Any JSON-safe message type `M` may travel on a channel of its own.
 *
 * @example
 * ```ts ignore
 * import { Notifier } from "@anubis/core";
 * import { openRedis, RedisNotificationBus } from "@anubis/redis";
 * import assert from "node:assert/strict";
 * const redis = await openRedis("redis://127.0.0.1:6379");
 * const [busA, busB] = [new RedisNotificationBus(redis), new RedisNotificationBus(redis)];
 * await busA.start();
 * await busB.start();
 * const [a, b] = [new Notifier(), new Notifier()];
 * a.connect(busA);
 * b.connect(busB);
 * const heard = new Promise((resolve) => a.subscribe(resolve));
 * b.toolsListChanged();
 * assert.deepEqual(await heard, { type: "tools_list_changed" });
 * await busA.close();
 * await busB.close();
 * redis.close();
 * ```
 */
export class RedisNotificationBus<M extends object = BusMessage> implements NotificationBus<M> {
  readonly #log: RedisEventStore;
  readonly #bus: EventLogBus<M>;
  readonly #timeoutMs: number;

  /**
   * Creates a bus on `redis`; {@link RedisNotificationBus.start} begins following.
   *
   * @param redis The connection (the caller closes it).
   * @param options Channel, retention, polling.
   */
  constructor(redis: RedisConnection, options: RedisNotificationBusOptions = {}) {
    this.#timeoutMs = options.commandTimeoutMs ?? 5_000;
    this.#log = new RedisEventStore(redis, {
      prefix: options.prefix ?? "anubis:bus",
      maxEventsPerSession: options.maxMessages ?? 1_000,
      ttlMs: options.ttlMs ?? 60_000,
      counterTtlMs: Infinity, // a channel lives as long as the server: its ids never restart
      pollIntervalMs: options.pollIntervalMs ?? 1_000,
      commandTimeoutMs: options.commandTimeoutMs,
    });
    this.#bus = new EventLogBus(this.#log, {
      channel: options.channel ?? "changes",
      retryMs: options.pollIntervalMs ?? 1_000,
    });
  }

  /**
   * Follows the channel from its latest message: messages other instances
   * publish after this resolves are delivered. Idempotent.
   *
   * @returns Resolves once following.
   * @throws {Error} When Redis cannot be read.
   *
   * @example
   * ```ts ignore
   * import { openRedis, RedisNotificationBus } from "@anubis/redis";
   * import assert from "node:assert/strict";
   * const redis = await openRedis("redis://127.0.0.1:6379");
   * const bus = new RedisNotificationBus(redis, { channel: "docs" });
   * await bus.start();
   * await bus.start(); // a second call changes nothing
   * assert.ok(bus);
   * await bus.close();
   * redis.close();
   * ```
   */
  start(): Promise<void> {
    return this.#bus.start();
  }

  /**
   * Appends a change to the channel, in order. Never rejects: a failed append
   * is logged and dropped (delivery between instances is best effort).
   *
   * @param message The change.
   * @returns Settles once the change is recorded (or failed).
   *
   * @example
   * ```ts ignore
   * import { openRedis, RedisNotificationBus } from "@anubis/redis";
   * import assert from "node:assert/strict";
   * const redis = await openRedis("redis://127.0.0.1:6379");
   * const bus = new RedisNotificationBus(redis, { channel: "docs" });
   * const other = new RedisNotificationBus(redis, { channel: "docs" });
   * await other.start();
   * const heard = new Promise((resolve) => other.subscribe(resolve));
   * await bus.publish({ event: { type: "prompts_list_changed" }, delivered: [] });
   * assert.deepEqual(await heard, { event: { type: "prompts_list_changed" }, delivered: [] });
   * await other.close();
   * await bus.close();
   * redis.close();
   * ```
   */
  publish(message: M): Promise<void> {
    return this.#bus.publish(message);
  }

  /**
   * Registers a listener for other instances' changes.
   *
   * @param listener Called once per message.
   * @returns A function that unregisters it.
   *
   * @example
   * ```ts ignore
   * import { openRedis, RedisNotificationBus } from "@anubis/redis";
   * import assert from "node:assert/strict";
   * const redis = await openRedis("redis://127.0.0.1:6379");
   * const bus = new RedisNotificationBus(redis, { channel: "docs" });
   * const heard: unknown[] = [];
   * const unsubscribe = bus.subscribe((message) => heard.push(message));
   * unsubscribe(); // the listener hears nothing from now on
   * assert.deepEqual(heard, []);
   * await bus.close();
   * redis.close();
   * ```
   */
  subscribe(listener: (message: M) => void): () => void {
    return this.#bus.subscribe(listener);
  }

  /**
   * Stops following (at once: the pub/sub connection is closed, no read is
   * left waiting) and waits for pending publishes, one command timeout at
   * most.
   *
   * @returns Resolves when stopped.
   *
   * @example
   * ```ts ignore
   * import { openRedis, RedisNotificationBus } from "@anubis/redis";
   * import assert from "node:assert/strict";
   * const redis = await openRedis("redis://127.0.0.1:6379");
   * const bus = new RedisNotificationBus(redis, { channel: "docs" });
   * await bus.start();
   * const started = Date.now();
   * await bus.close(); // at once: nothing blocks on Redis
   * assert.ok(Date.now() - started < 1_000);
   * redis.close();
   * ```
   */
  async close(): Promise<void> {
    // Publishes queued while Redis was down each wait out the command
    // timeout: close waits for them one timeout at most.
    await this.#bus.stop(this.#timeoutMs);
    await this.#log.close();
    await this.#bus.ended();
  }
}
