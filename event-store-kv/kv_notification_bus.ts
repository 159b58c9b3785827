/**
 * A `NotificationBus` (of `@anubis/core`) on Deno KV: every instance that
 * opens the same database hears the changes the others raise, so a tool list
 * change or a resource update on one instance reaches the sessions and listen
 * streams held by all.
 *
 * @module
 */

import type { BusMessage, NotificationBus } from "@anubis/core";
import { EventLogBus } from "@anubis/core/engine";
import type { KvKeyPart, KvLike } from "@anubis/core/kv";
import { KvEventStore } from "./kv_event_store.ts";

/**
 * Options of a {@link KvNotificationBus}.
 *
 * @example
 * ```ts
 * import type { KvNotificationBusOptions } from "@anubis/event-store-kv";
 * const options: KvNotificationBusOptions = { channel: "weather", pollIntervalMs: 50 };
 * ```
 */
export interface KvNotificationBusOptions {
  /** Key prefix (default `["anubis", "bus"]`). */
  prefix?: readonly KvKeyPart[];
  /** The channel: instances of one server share it (default `"changes"`). */
  channel?: string;
  /** How often other instances' messages are polled for, in ms (default 100). */
  pollIntervalMs?: number;
  /** Messages kept for slow readers (default 1,000). */
  maxMessages?: number;
  /** Age after which a message is dropped, in ms (default 60,000). */
  ttlMs?: number;
  /** Also wake on `kv.watch()` (KV Connect backends; default `false`). */
  watch?: boolean;
  /** Close the database in `close()` (default `false`). */
  closeKv?: boolean;
}

/**
 * Changes between instances through one KV database: a message is appended
 * to a channel (an event log with atomic ids, bounded and expiring, as in
 * {@link KvEventStore}) and every other instance follows the channel from the
 * id it found when it started, by polling (`watch()` does not cross processes
 * on a local file). Its own messages are recognised by a random origin id and
 * skipped. It carries {@link BusMessage}s unless told otherwise: any JSON-safe
 * object type `M` may travel on a channel of its own (`KvNotificationBus<M>`).
 *
 * @example
 * ```ts
 * import { Notifier } from "@anubis/core";
 * import { KvNotificationBus } from "@anubis/event-store-kv";
 * import assert from "node:assert/strict";
 * const kv = await Deno.openKv(":memory:");
 * const [busA, busB] = [new KvNotificationBus(kv), new KvNotificationBus(kv)];
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
 * kv.close();
 * ```
 */
export class KvNotificationBus<M extends object = BusMessage> implements NotificationBus<M> {
  readonly #kv: KvLike;
  readonly #bus: EventLogBus<M>;
  readonly #closeKv: boolean;

  /**
   * Creates a bus on `kv`; {@link start} begins following the channel.
   *
   * @param kv The database (`Deno.Kv`, or `npm:@deno/kv`'s on Node).
   * @param options Channel, polling and retention.
   */
  constructor(kv: KvLike, options: KvNotificationBusOptions = {}) {
    this.#kv = kv;
    this.#closeKv = options.closeKv ?? false;
    const log = new KvEventStore(kv, {
      prefix: options.prefix ?? ["anubis", "bus"],
      maxEventsPerSession: options.maxMessages ?? 1_000,
      ttlMs: options.ttlMs ?? 60_000,
      // A channel is one per server and lives as long as it does: its counter
      // never expires (only messages do), and one deleted all the same goes on
      // above every id given before, so a follower's cursor is never passed
      // over by a channel that began again (it would miss what it holds).
      counterTtlMs: Infinity,
      restartIdsFromClock: true,
      pollIntervalMs: options.pollIntervalMs ?? 100,
      watch: options.watch,
    });
    this.#bus = new EventLogBus(log, {
      channel: options.channel ?? "changes",
      retryMs: 10 * (options.pollIntervalMs ?? 100),
    });
  }

  /**
   * Follows the channel from its latest message: messages other instances
   * publish after this resolves are delivered. Idempotent.
   *
   * @returns Resolves once following.
   *
   * @example
   * ```ts
   * import { KvNotificationBus } from "@anubis/event-store-kv";
   * const kv = await Deno.openKv(":memory:");
   * const bus = new KvNotificationBus(kv, { channel: "docs" });
   * await bus.start();
   * await bus.start(); // a second call changes nothing
   * await bus.close();
   * kv.close();
   * ```
   */
  start(): Promise<void> {
    return this.#bus.start();
  }

  /**
   * Appends a change to the channel (in order; a failed append is logged and
   * dropped: delivery between instances is best effort).
   *
   * @param message The change and the sessions already served.
   *
   * @example
   * ```ts
   * import { KvNotificationBus } from "@anubis/event-store-kv";
   * import assert from "node:assert/strict";
   * const kv = await Deno.openKv(":memory:");
   * const [a, b] = [new KvNotificationBus(kv), new KvNotificationBus(kv)];
   * await b.start();
   * const heard = new Promise((resolve) => b.subscribe(resolve));
   * a.publish({ event: { type: "prompts_list_changed" }, delivered: [] });
   * assert.deepEqual(await heard, { event: { type: "prompts_list_changed" }, delivered: [] });
   * await a.close();
   * await b.close();
   * kv.close();
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
   * ```ts
   * import { KvNotificationBus } from "@anubis/event-store-kv";
   * import assert from "node:assert/strict";
   * const kv = await Deno.openKv(":memory:");
   * const bus = new KvNotificationBus(kv);
   * const heard: unknown[] = [];
   * const unsubscribe = bus.subscribe((message) => heard.push(message));
   * unsubscribe(); // the listener hears nothing from now on
   * assert.deepEqual(heard, []);
   * await bus.close();
   * kv.close();
   * ```
   */
  subscribe(listener: (message: M) => void): () => void {
    return this.#bus.subscribe(listener);
  }

  /**
   * Stops following, waits for pending publishes, and closes the database if
   * made with `closeKv`.
   *
   * @returns Resolves when stopped.
   *
   * @example
   * ```ts
   * import { KvNotificationBus } from "@anubis/event-store-kv";
   * const kv = await Deno.openKv(":memory:");
   * const bus = new KvNotificationBus(kv, { closeKv: true });
   * await bus.start();
   * bus.publish({ event: { type: "tools_list_changed" }, delivered: [] });
   * await bus.close(); // the publish is written, following stops, and kv is closed
   * ```
   */
  async close(): Promise<void> {
    await this.#bus.close();
    if (this.#closeKv) this.#kv.close();
  }
}
