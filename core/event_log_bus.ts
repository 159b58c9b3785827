/**
 * A {@link NotificationBus} on any event store that tails across instances:
 * one channel is one stream of the store, every message carries the
 * publishing instance's origin, and each instance follows the channel from
 * where it started and delivers what the others publish. The KV and Redis
 * buses are this on their own stores.
 *
 * @module
 */

import type { EventStore } from "./event_store.ts";
import { logger } from "./logger.ts";
import type { BusMessage, NotificationBus } from "./notification_bus.ts";

/**
 * What an {@link EventLogBus} needs of its store: append, the latest id, and
 * a live tail (a store other instances share).
 *
 * @example
 * ```ts
 * import type { EventLog } from "@anubis/core/engine";
 * import { MemoryEventStore } from "@anubis/event-store-memory";
 * import assert from "node:assert/strict";
 * const log: EventLog = new MemoryEventStore();
 * assert.equal(await log.latestId("c"), 0);
 * ```
 */
export type EventLog =
  & Pick<EventStore, "append" | "latestId">
  & { tail: NonNullable<EventStore["tail"]> };

/**
 * Options of an {@link EventLogBus}.
 *
 * @example
 * ```ts
 * import type { EventLogBusOptions } from "@anubis/core/engine";
 * import assert from "node:assert/strict";
 * const options: EventLogBusOptions = { channel: "weather", retryMs: 1_000 };
 * assert.equal(options.channel, "weather");
 * ```
 */
export interface EventLogBusOptions {
  /** The channel (the store's stream id): instances of one server share it. */
  channel: string;
  /** The wait before reading again after the store failed a read, in ms. */
  retryMs: number;
}

/** A message as stored: who published it, and what. */
type Envelope<M> = M & { origin: string };

/**
 * A bus whose messages are the events of one channel in a shared event store.
 * Publishes are appended in order and never reject (a failed append is logged
 * and dropped: delivery between instances is best effort); a failed read is
 * logged and retried after `retryMs`; a tail that ends by itself (the channel
 * was deleted, or its store lost its data) is followed again from the start.
 *
 * @example
 * ```ts
 * import { EventLogBus } from "@anubis/core/engine";
 * import { MemoryEventStore } from "@anubis/event-store-memory";
 * import assert from "node:assert/strict";
 * const log = new MemoryEventStore();
 * const [a, b] = [
 *   new EventLogBus(log, { channel: "c", retryMs: 100 }),
 *   new EventLogBus(log, { channel: "c", retryMs: 100 }),
 * ];
 * await b.start();
 * const heard = new Promise((resolve) => b.subscribe(resolve));
 * await a.publish({ event: { type: "tools_list_changed" }, delivered: [] });
 * assert.deepEqual(await heard, { event: { type: "tools_list_changed" }, delivered: [] });
 * await a.close();
 * await b.close();
 * ```
 */
export class EventLogBus<M extends object = BusMessage> implements NotificationBus<M> {
  readonly #log: EventLog;
  readonly #channel: string;
  readonly #retryMs: number;
  readonly #origin = crypto.randomUUID();
  readonly #listeners = new Set<(message: M) => void>();
  readonly #stop = new AbortController();
  #publishing: Promise<void> = Promise.resolve();
  #following?: Promise<void>;

  /**
   * Creates a bus on `log`; {@link EventLogBus.start} begins following.
   *
   * @param log The store (its owner closes it).
   * @param options The channel and the read retry.
   */
  constructor(log: EventLog, options: EventLogBusOptions) {
    this.#log = log;
    this.#channel = options.channel;
    this.#retryMs = options.retryMs;
  }

  /**
   * Follows the channel from its latest message: messages other instances
   * publish after this resolves are delivered. Idempotent.
   *
   * @returns Resolves once following.
   * @throws {Error} When the store cannot be read.
   *
   * @example
   * ```ts
   * import { EventLogBus } from "@anubis/core/engine";
   * import { MemoryEventStore } from "@anubis/event-store-memory";
   * import assert from "node:assert/strict";
   * const bus = new EventLogBus(new MemoryEventStore(), { channel: "c", retryMs: 100 });
   * await bus.start();
   * await bus.start(); // a second call changes nothing
   * await bus.close();
   * assert.ok(bus);
   * ```
   */
  async start(): Promise<void> {
    if (this.#following) return;
    const from = await this.#log.latestId(this.#channel);
    this.#following ??= this.#follow(from);
  }

  /**
   * Appends a message to the channel, in order; never rejects.
   *
   * @param message The message.
   * @returns Settles once the message is recorded (or failed).
   *
   * @example
   * ```ts
   * import { EventLogBus } from "@anubis/core/engine";
   * import { MemoryEventStore } from "@anubis/event-store-memory";
   * import assert from "node:assert/strict";
   * const log = new MemoryEventStore();
   * const bus = new EventLogBus(log, { channel: "c", retryMs: 100 });
   * await bus.publish({ event: { type: "prompts_list_changed" }, delivered: [] });
   * assert.equal(await log.latestId("c"), 1);
   * await bus.close();
   * ```
   */
  publish(message: M): Promise<void> {
    const envelope: Envelope<M> = { origin: this.#origin, ...message };
    const data = JSON.stringify(envelope);
    return this.#publishing = this.#publishing.then(() =>
      this.#log.append(this.#channel, data).then(
        () => {},
        (error) => logger.error("store.failed", "notification bus publish failed", { error }),
      )
    );
  }

  /**
   * Registers a listener for other instances' messages.
   *
   * @param listener Called once per message.
   * @returns A function that unregisters it.
   *
   * @example
   * ```ts
   * import { EventLogBus } from "@anubis/core/engine";
   * import { MemoryEventStore } from "@anubis/event-store-memory";
   * import assert from "node:assert/strict";
   * const bus = new EventLogBus(new MemoryEventStore(), { channel: "c", retryMs: 100 });
   * const heard: unknown[] = [];
   * const unsubscribe = bus.subscribe((message) => heard.push(message));
   * unsubscribe(); // the listener hears nothing from now on
   * assert.deepEqual(heard, []);
   * await bus.close();
   * ```
   */
  subscribe(listener: (message: M) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Stops following and waits for pending publishes (`waitMs` at most, when
   * given: publishes queued behind a store that is down may each wait out its
   * command timeout). Following may still be ending: see
   * {@link EventLogBus.ended}.
   *
   * @param waitMs The longest wait for pending publishes (default: no bound).
   * @returns Resolves when stopped.
   *
   * @example
   * ```ts
   * import { EventLogBus } from "@anubis/core/engine";
   * import { MemoryEventStore } from "@anubis/event-store-memory";
   * import assert from "node:assert/strict";
   * const bus = new EventLogBus(new MemoryEventStore(), { channel: "c", retryMs: 100 });
   * await bus.start();
   * await bus.stop(1_000);
   * await bus.ended();
   * assert.ok(bus);
   * ```
   */
  async stop(waitMs?: number): Promise<void> {
    this.#stop.abort();
    if (waitMs === undefined) return await this.#publishing;
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      this.#publishing,
      new Promise((resolve) => timer = setTimeout(resolve, waitMs)),
    ]);
    clearTimeout(timer);
  }

  /**
   * Settles once following has ended (after {@link EventLogBus.stop}).
   *
   * @returns Resolves when no read of the channel is left.
   *
   * @example
   * ```ts
   * import { EventLogBus } from "@anubis/core/engine";
   * import { MemoryEventStore } from "@anubis/event-store-memory";
   * import assert from "node:assert/strict";
   * const bus = new EventLogBus(new MemoryEventStore(), { channel: "c", retryMs: 100 });
   * await bus.ended(); // never started: nothing to wait for
   * assert.ok(bus);
   * ```
   */
  async ended(): Promise<void> {
    await this.#following;
  }

  /**
   * Stops following and waits for pending publishes and for following to end.
   *
   * @returns Resolves when stopped.
   *
   * @example
   * ```ts
   * import { EventLogBus } from "@anubis/core/engine";
   * import { MemoryEventStore } from "@anubis/event-store-memory";
   * import assert from "node:assert/strict";
   * const log = new MemoryEventStore();
   * const bus = new EventLogBus(log, { channel: "c", retryMs: 100 });
   * await bus.start();
   * bus.publish({ event: { type: "tools_list_changed" }, delivered: [] });
   * await bus.close(); // the publish is written and following stops
   * assert.equal(await log.latestId("c"), 1);
   * ```
   */
  async close(): Promise<void> {
    await this.stop();
    await this.ended();
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
        // The tail ends by itself when the channel was deleted or its ids went
        // back (a store that lost its data): what it holds from now on is new.
        cursor = 0;
      } catch (error) {
        // A store error must not end following for good: try again soon.
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
