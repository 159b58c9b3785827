/**
 * The contract that carries change notifications between server instances
 * (processes behind one load balancer), so a change raised on one reaches the
 * sessions and listen streams of all. Core holds only the contract; a store
 * package implements it (`KvNotificationBus` in `@anubis/event-store-kv`).
 *
 * @module
 */

/**
 * One change.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { ChangeEvent } from "@anubis/core";
 * const event: ChangeEvent = { type: "resource_updated", uri: "file:///notes/1" };
 * assert.equal(event.type, "resource_updated");
 * ```
 */
export type ChangeEvent =
  | { type: "tools_list_changed" }
  | { type: "prompts_list_changed" }
  | { type: "resources_list_changed" }
  | { type: "resource_updated"; uri: string };

/**
 * One change as it travels between instances.
 *
 * @example
 * ```ts
 * import type { BusMessage } from "@anubis/core";
 * const message: BusMessage = { event: { type: "tools_list_changed" }, delivered: ["3f2a…"] };
 * ```
 */
export interface BusMessage {
  /** The change. */
  event: ChangeEvent;
  /**
   * The legacy sessions the publishing instance delivered it to itself. A
   * session restored on several instances lives in each one's memory but
   * shares one event store, so the receivers skip these: each session gets
   * the change once.
   */
  delivered: string[];
}

/**
 * Carries changes between instances. Implementations deliver to `subscribe`
 * listeners the messages other instances published, never the instance's own,
 * in publication order, at most once each; delivery is best effort (a change
 * raised while an instance is down is not replayed to it). The message type
 * defaults to a {@link BusMessage}; a transport may carry its own JSON-safe
 * messages between its instances on a bus of its own (`NotificationBus<M>`).
 *
 * @example
 * ```ts
 * import { type BusMessage, type NotificationBus, Notifier } from "@anubis/core";
 * import assert from "node:assert/strict";
 * // Two "instances" in one process, joined by a bus that hands each message to the other side.
 * function pair(): [NotificationBus, NotificationBus] {
 *   const sides = [new Set<(m: BusMessage) => void>(), new Set<(m: BusMessage) => void>()];
 *   const side = (mine: number): NotificationBus => ({
 *     publish: (message) => sides[1 - mine].forEach((listener) => listener(message)),
 *     subscribe: (listener) => (sides[mine].add(listener), () => sides[mine].delete(listener)),
 *   });
 *   return [side(0), side(1)];
 * }
 * const [busA, busB] = pair();
 * const a = new Notifier();
 * const b = new Notifier();
 * a.connect(busA);
 * b.connect(busB);
 * const seen: string[] = [];
 * a.subscribe((event) => void seen.push(event.type));
 * b.toolsListChanged();
 * assert.deepEqual(seen, ["tools_list_changed"]); // A heard B's change
 * ```
 */
export interface NotificationBus<M = BusMessage> {
  /**
   * Sends a change raised on this instance to the others.
   *
   * @param message The change and the sessions already served.
   * @returns Nothing; a bus that records changes durably may return a
   *   promise that settles (never rejects) once this one is recorded for
   *   the others: the engine answers the request that raised it only then,
   *   so an instance killed right after answering loses nothing.
   */
  publish(message: M): void;
  /**
   * Registers a listener for changes raised on other instances.
   *
   * @param listener Called once per message.
   * @returns A function that unregisters it.
   */
  subscribe(listener: (message: M) => void): () => void;
}
