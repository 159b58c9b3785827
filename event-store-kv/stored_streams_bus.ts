/**
 * Change notifications that reach every session's stored stream whichever
 * instance raises them: the raising instance records them itself, so a
 * session whose only live stream was on an instance that died misses none.
 *
 * @module
 */

import type {
  BusMessage,
  EventStore,
  NotificationBus,
  ServerCapabilities,
  SessionRecord,
} from "@anubis/core";
import { changeNotification, sessionWantsChange } from "@anubis/core/engine";
import { logger } from "@anubis/core";

/** Appends in flight at once while a change is recorded. */
const APPEND_BATCH = 64;

/**
 * Options of a {@link StoredStreamsBus}.
 *
 * @example
 * ```ts
 * import type { StoredStreamsBusOptions } from "@anubis/event-store-kv";
 * const options: Partial<StoredStreamsBusOptions> = { capabilities: { tools: { listChanged: true } } };
 * ```
 */
export interface StoredStreamsBusOptions {
  /** The event store every instance shares (the one the HTTP handler records to). */
  eventStore: EventStore;
  /** Every live session record (`KvSessionStore.records()` of `@anubis/session-kv`). */
  sessions: () => AsyncIterable<SessionRecord>;
  /** The server's capabilities (which list changes sessions receive). */
  capabilities: ServerCapabilities;
}

/**
 * A {@link NotificationBus} in front of another (a `KvNotificationBus`) for
 * instances that share an event store and a session store. A change raised
 * here is appended, before it is published, to the stored stream of every
 * stored session that wants it and that this instance did not serve itself
 * (the sessions in the message's `delivered`); the published message then
 * names all of them, so the instances that hold those sessions skip them and
 * their streams read the change from the store (their tail). Every session
 * gets each change once, whether its stream is live here, on another
 * instance, or nowhere (an instance that held it died): a client that
 * resumes on any instance replays it.
 *
 * A change raised by an instance that dies before it appended it reaches
 * only the sessions it had reached. The cost is one listing of the sessions
 * per change raised.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { BusMessage, SessionRecord } from "@anubis/core";
 * import { KvEventStore, StoredStreamsBus } from "@anubis/event-store-kv";
 * const kv = await Deno.openKv(":memory:");
 * const eventStore = new KvEventStore(kv);
 * const record: SessionRecord = {
 *   v: 1, id: "elsewhere", protocolVersion: "2025-11-25", clientInfo: { name: "c", version: "1" },
 *   clientCapabilities: {}, initialized: true, subscriptions: [], assigns: {}, updatedAt: 0,
 * };
 * const published: BusMessage[] = [];
 * const bus = new StoredStreamsBus({ publish: (m) => published.push(m), subscribe: () => () => {} }, {
 *   eventStore,
 *   sessions: async function* () { yield record; },
 *   capabilities: { tools: { listChanged: true } },
 * });
 * bus.publish({ event: { type: "tools_list_changed" }, delivered: [] });
 * await bus.idle();
 * assert.deepEqual(published, [{ event: { type: "tools_list_changed" }, delivered: ["elsewhere"] }]);
 * assert.equal((await eventStore.replay("elsewhere", 0))[0].data, '{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}');
 * kv.close();
 * ```
 */
export class StoredStreamsBus implements NotificationBus {
  readonly #inner: NotificationBus;
  readonly #options: StoredStreamsBusOptions;
  #recording: Promise<void> = Promise.resolve();

  /**
   * Wraps `inner`.
   *
   * @param inner The bus between the instances.
   * @param options The shared stores and the server's capabilities.
   */
  constructor(inner: NotificationBus, options: StoredStreamsBusOptions) {
    this.#inner = inner;
    this.#options = options;
  }

  /**
   * Records the change in the stored streams of the sessions not yet served,
   * then publishes it naming them (in the order raised).
   *
   * @param message The change and the sessions this instance served.
   * @returns Settles once the change is in every stored stream it was
   *   recorded to and handed to the inner bus (and, when that bus says so,
   *   appended there too).
   *
   * @example
   * ```ts
   * import { KvEventStore, StoredStreamsBus } from "@anubis/event-store-kv";
   * const kv = await Deno.openKv(":memory:");
   * const bus = new StoredStreamsBus({ publish() {}, subscribe: () => () => {} }, {
   *   eventStore: new KvEventStore(kv),
   *   sessions: async function* () {},
   *   capabilities: {},
   * });
   * bus.publish({ event: { type: "resources_list_changed" }, delivered: [] });
   * await bus.idle();
   * kv.close();
   * ```
   */
  publish(message: BusMessage): Promise<void> {
    return this.#recording = this.#recording.then(async () => {
      let recorded: string[] = [];
      try {
        recorded = await this.#record(message);
      } catch (error) {
        logger.error("store.failed", "recording a change in the stored streams failed", { error });
      }
      await this.#inner.publish({ ...message, delivered: [...message.delivered, ...recorded] });
    });
  }

  /**
   * Registers a listener for other instances' changes (the inner bus's).
   *
   * @param listener Called once per message.
   * @returns A function that unregisters it.
   *
   * @example
   * ```ts
   * import { KvEventStore, StoredStreamsBus } from "@anubis/event-store-kv";
   * const kv = await Deno.openKv(":memory:");
   * const bus = new StoredStreamsBus({ publish() {}, subscribe: () => () => {} }, {
   *   eventStore: new KvEventStore(kv),
   *   sessions: async function* () {},
   *   capabilities: {},
   * });
   * bus.subscribe(() => {})();
   * kv.close();
   * ```
   */
  subscribe(listener: (message: BusMessage) => void): () => void {
    return this.#inner.subscribe(listener);
  }

  /**
   * Resolves once every change published so far was recorded and passed on.
   *
   * @returns When idle.
   *
   * @example
   * ```ts
   * import { KvEventStore, StoredStreamsBus } from "@anubis/event-store-kv";
   * const kv = await Deno.openKv(":memory:");
   * const bus = new StoredStreamsBus({ publish() {}, subscribe: () => () => {} }, {
   *   eventStore: new KvEventStore(kv),
   *   sessions: async function* () {},
   *   capabilities: {},
   * });
   * await bus.idle();
   * kv.close();
   * ```
   */
  idle(): Promise<void> {
    return this.#recording;
  }

  /** Appends the change to each wanting session not served here; returns their ids. */
  async #record(message: BusMessage): Promise<string[]> {
    const { eventStore, sessions, capabilities } = this.#options;
    const served = new Set(message.delivered);
    const data = JSON.stringify(changeNotification(message.event));
    const recorded: string[] = [];
    let batch: string[] = [];
    // Appends run a batch at a time; a session whose append failed is left
    // out of `delivered`, so the instance holding it (if any) delivers it.
    const flush = async () => {
      const results = await Promise.allSettled(batch.map((id) => eventStore.append(id, data)));
      results.forEach((result, i) => {
        if (result.status === "fulfilled") recorded.push(batch[i]);
        else {
          logger.error("store.failed", `recording a change for session ${batch[i]} failed`, {
            error: result.reason,
          });
        }
      });
      batch = [];
    };
    for await (const record of sessions()) {
      if (!record.initialized || served.has(record.id)) continue;
      const subscribed = (uri: string) => record.subscriptions.includes(uri);
      if (!sessionWantsChange(message.event, capabilities, subscribed)) continue;
      batch.push(record.id);
      if (batch.length >= APPEND_BATCH) await flush();
    }
    await flush();
    return recorded;
  }
}
