/**
 * A `NotificationBus` (of `@anubis/core`) on Redis: every instance connected
 * to the same Redis hears the changes the others raise.
 *
 * @module
 */

import { type BusMessage, logger, type NotificationBus } from "@anubis/core";
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
type Envelope<M> = M & { origin: string };

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
  readonly #channel: string;
  readonly #origin = crypto.randomUUID();
  readonly #listeners = new Set<(message: M) => void>();
  readonly #stop = new AbortController();
  readonly #retryMs: number;
  readonly #timeoutMs: number;
  #publishing: Promise<void> = Promise.resolve();
  #following?: Promise<void>;

  /**
   * Creates a bus on `redis`; {@link RedisNotificationBus.start} begins following.
   *
   * @param redis The connection (the caller closes it).
   * @param options Channel, retention, polling.
   */
  constructor(redis: RedisConnection, options: RedisNotificationBusOptions = {}) {
    this.#channel = options.channel ?? "changes";
    this.#retryMs = options.pollIntervalMs ?? 1_000;
    this.#timeoutMs = options.commandTimeoutMs ?? 5_000;
    this.#log = new RedisEventStore(redis, {
      prefix: options.prefix ?? "anubis:bus",
      maxEventsPerSession: options.maxMessages ?? 1_000,
      ttlMs: options.ttlMs ?? 60_000,
      counterTtlMs: Infinity, // a channel lives as long as the server: its ids never restart
      pollIntervalMs: options.pollIntervalMs ?? 1_000,
      commandTimeoutMs: options.commandTimeoutMs,
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
  async start(): Promise<void> {
    if (this.#following) return;
    const from = await this.#log.latestId(this.#channel);
    this.#following ??= this.#follow(from);
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
    const data = JSON.stringify({ origin: this.#origin, ...message } satisfies Envelope<M>);
    return this.#publishing = this.#publishing.then(() =>
      this.#log.append(this.#channel, data).then(
        () => {},
        (error) => logger.error("store.failed", "notification bus publish failed", { error }),
      )
    );
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
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
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
    this.#stop.abort();
    // Publishes queued while Redis was down each wait out the command
    // timeout: close waits for them one timeout at most.
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      this.#publishing,
      new Promise((resolve) => timer = setTimeout(resolve, this.#timeoutMs)),
    ]);
    clearTimeout(timer);
    await this.#log.close();
    await this.#following;
  }

  async #follow(from: number): Promise<void> {
    let cursor = from;
    const signal = this.#stop.signal;
    while (!signal.aborted) {
      try {
        for await (const event of this.#log.tail(this.#channel, cursor, signal)) {
          cursor = event.id;
          this.#receive(event.data);
        }
        // The tail ends by itself when the channel's counter went back (a
        // Redis that lost its data): what it holds from now on is new.
        cursor = 0;
      } catch (error) {
        if (signal.aborted) return;
        logger.error("store.failed", "notification bus read failed, retrying", { error });
        await new Promise((resolve) => {
          const timer = setTimeout(resolve, this.#retryMs);
          signal.addEventListener("abort", () => (clearTimeout(timer), resolve(undefined)), {
            once: true,
          });
        });
      }
    }
  }

  #receive(data: string): void {
    let envelope: Envelope<M>;
    try {
      envelope = JSON.parse(data);
    } catch {
      return;
    }
    if (typeof envelope !== "object" || envelope === null || envelope.origin === this.#origin) {
      return;
    }
    const { origin: _origin, ...message } = envelope;
    for (const listener of [...this.#listeners]) {
      try {
        listener(message as M);
      } catch (error) {
        logger.error("listener.failed", "notification bus listener failed", { error });
      }
    }
  }
}
