/**
 * Change notifications a server publishes (list changes and resource
 * updates), delivered by the engine to legacy sessions and to stateless
 * `subscriptions/listen` streams, and, with a {@link NotificationBus}, to
 * those of the other instances serving it.
 *
 * @module
 */

import type { JsonRpcNotification } from "./json_rpc.ts";
import type { BusMessage, ChangeEvent, NotificationBus } from "./notification_bus.ts";
import type { ServerCapabilities } from "./types.ts";
import { logger } from "./logger.ts";

/**
 * The notification a legacy session or a listen stream receives for a change.
 *
 * @param event The change.
 * @returns The JSON-RPC notification (no `_meta`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { changeNotification } from "@anubis/core/engine";
 * assert.deepEqual(changeNotification({ type: "resource_updated", uri: "notes://1" }), {
 *   jsonrpc: "2.0",
 *   method: "notifications/resources/updated",
 *   params: { uri: "notes://1" },
 * });
 * ```
 */
export function changeNotification(event: ChangeEvent): JsonRpcNotification {
  switch (event.type) {
    case "tools_list_changed":
      return { jsonrpc: "2.0", method: "notifications/tools/list_changed" };
    case "prompts_list_changed":
      return { jsonrpc: "2.0", method: "notifications/prompts/list_changed" };
    case "resources_list_changed":
      return { jsonrpc: "2.0", method: "notifications/resources/list_changed" };
    case "resource_updated":
      return {
        jsonrpc: "2.0",
        method: "notifications/resources/updated",
        params: { uri: event.uri },
      };
  }
}

/**
 * Whether an initialized legacy session receives a change: a resource update
 * when it subscribed to the URI, a list change when the server advertises
 * `listChanged` for that list.
 *
 * @param event The change.
 * @param capabilities The server's capabilities.
 * @param isSubscribed Whether the session subscribed to a URI.
 * @returns `true` when the session gets the notification.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sessionWantsChange } from "@anubis/core/engine";
 * const caps = { tools: { listChanged: true } };
 * assert.equal(sessionWantsChange({ type: "tools_list_changed" }, caps, () => false), true);
 * assert.equal(sessionWantsChange({ type: "prompts_list_changed" }, caps, () => false), false);
 * ```
 */
export function sessionWantsChange(
  event: ChangeEvent,
  capabilities: ServerCapabilities,
  isSubscribed: (uri: string) => boolean,
): boolean {
  switch (event.type) {
    case "resource_updated":
      return isSubscribed(event.uri);
    case "tools_list_changed":
      return capabilities.tools?.listChanged === true;
    case "prompts_list_changed":
      return capabilities.prompts?.listChanged === true;
    case "resources_list_changed":
      return capabilities.resources?.listChanged === true;
  }
}

/**
 * A change listener. It may return the ids of the legacy sessions it
 * delivered the change to (the engine's hub does), and skips the sessions in
 * `skip` (already served by the instance that raised the change).
 *
 * @example
 * ```ts
 * import type { ChangeListener } from "@anubis/core";
 * import assert from "node:assert/strict";
 * const seen: string[] = [];
 * const listener: ChangeListener = (event) => void seen.push(event.type);
 * listener({ type: "tools_list_changed" });
 * assert.deepEqual(seen, ["tools_list_changed"]);
 * ```
 */
export type ChangeListener = (
  event: ChangeEvent,
  skip?: ReadonlySet<string>,
) => Iterable<string> | void;

/**
 * Publishes changes to every subscriber. A server's notifier is shared by all
 * transports serving it; handlers reach it as `frame.notify`. Connected to a
 * {@link NotificationBus}, it also sends each change to the other instances
 * and delivers theirs.
 *
 * @example
 * ```ts
 * import { Notifier } from "@anubis/core";
 * import assert from "node:assert/strict";
 * const notifier = new Notifier();
 * const seen: string[] = [];
 * const stop = notifier.subscribe((event) => void seen.push(event.type));
 * notifier.toolsListChanged();
 * stop();
 * assert.deepEqual(seen, ["tools_list_changed"]);
 * ```
 */
export class Notifier {
  #listeners = new Set<ChangeListener>();
  #bus?: NotificationBus;
  /** Deliveries not yet recorded, with the publish count when each began (made on first use). */
  #inflight: Map<Promise<void>, number> | undefined;
  #published = 0;

  /**
   * Registers a listener.
   *
   * @param listener Called for every change, local or from another instance.
   * @returns A function that unregisters it.
   *
   * @example
   * ```ts
   * import { Notifier } from "@anubis/core";
   * import assert from "node:assert/strict";
   * const notifier = new Notifier();
   * const seen: unknown[] = [];
   * const stop = notifier.subscribe((event) => void seen.push(event));
   * notifier.resourceUpdated("file:///notes/1");
   * stop();
   * notifier.resourceUpdated("file:///notes/2"); // not heard
   * assert.deepEqual(seen, [{ type: "resource_updated", uri: "file:///notes/1" }]);
   * ```
   */
  subscribe(listener: ChangeListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Joins the other instances on `bus`: local changes are published to it
   * (with the sessions served here) and its changes are delivered here,
   * skipping the sessions the raising instance served. One bus at a time.
   *
   * @param bus The bus.
   * @returns A function that disconnects.
   *
   * @example
   * ```ts
   * import { type BusMessage, Notifier } from "@anubis/core";
   * import assert from "node:assert/strict";
   * const sent: BusMessage[] = [];
   * const notifier = new Notifier();
   * const disconnect = notifier.connect({ publish: (m) => sent.push(m), subscribe: () => () => {} });
   * notifier.promptsListChanged();
   * assert.deepEqual(sent, [ { event: { type: "prompts_list_changed" }, delivered: [] } ]);
   * disconnect();
   * ```
   */
  connect(bus: NotificationBus): () => void {
    if (this.#bus) throw new Error("This notifier is already connected to a bus");
    this.#bus = bus;
    const stop = bus.subscribe((message: BusMessage) => {
      this.#deliver(message.event, new Set(message.delivered));
    });
    return () => {
      stop();
      if (this.#bus === bus) this.#bus = undefined;
    };
  }

  /**
   * Delivers a change to every listener (a throwing listener does not stop
   * the others), then to the other instances when a bus is connected.
   *
   * @param event The change.
   *
   * @example
   * ```ts
   * import { type ChangeEvent, Notifier } from "@anubis/core";
   * import assert from "node:assert/strict";
   * const seen: ChangeEvent[] = [];
   * const notifier = new Notifier();
   * notifier.subscribe((event) => void seen.push(event));
   * notifier.publish({ type: "resources_list_changed" });
   * assert.deepEqual(seen, [ { type: "resources_list_changed" } ]);
   * ```
   */
  publish(event: ChangeEvent): void {
    this.#published++;
    const delivered = this.#deliver(event);
    // A bus that records durably returns a promise (see NotificationBus.publish).
    const recording: unknown = this.#bus?.publish({ event, delivered });
    if (recording instanceof Promise) this.track(recording);
  }

  /**
   * How many changes were published here so far: a mark for
   * {@link recorded}, read when a request starts.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { Notifier } from "@anubis/core";
   * const notifier = new Notifier();
   * notifier.toolsListChanged();
   * assert.equal(notifier.published, 1);
   * ```
   */
  get published(): number {
    return this.#published;
  }

  /**
   * With a bus connected, makes {@link recorded} wait for a delivery in
   * flight (a bus publish, or a local session's stream appending the change
   * to the shared event store); without a bus (one instance) it does nothing.
   *
   * @param delivery Settles once the change is recorded.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { Notifier } from "@anubis/core";
   * const notifier = new Notifier();
   * notifier.track(new Promise(() => {})); // no bus: not waited for
   * assert.equal(notifier.recorded(), undefined);
   * notifier.connect({ publish() {}, subscribe: () => () => {} });
   * let appended = false;
   * notifier.track(Promise.resolve().then(() => void (appended = true)));
   * await notifier.recorded();
   * assert.ok(appended);
   * ```
   */
  track(delivery: Promise<unknown>): void {
    if (this.#bus === undefined) return;
    const inflight = this.#inflight ??= new Map();
    const done: Promise<void> = delivery.then(() => {}, () => {}).finally(() =>
      inflight.delete(done)
    );
    inflight.set(done, this.#published);
  }

  /**
   * Settles once every change published after the mark `since` (see
   * {@link published}) is recorded (see {@link NotificationBus.publish});
   * `undefined` when none is in flight, which is always the case without a
   * bus or with a bus that records nothing durably. The engine awaits it
   * before answering a request, with the mark read when the request began:
   * a change the request raised is recorded before the answer leaves, and
   * changes raised before it began do not hold it up.
   *
   * @param since The mark; default 0 (every change in flight).
   * @returns The wait, or `undefined`.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { type BusMessage, Notifier } from "@anubis/core";
   * const notifier = new Notifier();
   * assert.equal(notifier.recorded(), undefined);
   * const stored: BusMessage[] = [];
   * notifier.connect({
   *   publish: (message) => Promise.resolve().then(() => void stored.push(message)),
   *   subscribe: () => () => {},
   * });
   * const mark = notifier.published;
   * notifier.toolsListChanged();
   * assert.equal(stored.length, 0); // on its way
   * assert.equal(notifier.recorded(notifier.published), undefined); // nothing after the new mark
   * await notifier.recorded(mark);
   * assert.equal(stored.length, 1);
   * assert.equal(notifier.recorded(), undefined);
   * ```
   */
  recorded(since = 0): Promise<void> | undefined {
    const inflight = this.#inflight;
    if (inflight === undefined || inflight.size === 0) return undefined;
    let waits: Promise<void>[] | undefined;
    for (const [done, at] of inflight) if (at > since) (waits ??= []).push(done);
    return waits && Promise.all(waits).then(() => {});
  }

  /**
   * Announces that the tool list changed.
   *
   * @example
   * ```ts
   * import { defineServer } from "@anubis/core";
   * import assert from "node:assert/strict";
   * const server = defineServer({ name: "s", version: "1.0.0" });
   * const seen: string[] = [];
   * server.notify.subscribe((event) => void seen.push(event.type));
   * server.notify.toolsListChanged();
   * assert.deepEqual(seen, ["tools_list_changed"]);
   * ```
   */
  toolsListChanged(): void {
    this.publish({ type: "tools_list_changed" });
  }

  /**
   * Announces that the prompt list changed.
   *
   * @example
   * ```ts
   * import { Notifier } from "@anubis/core";
   * import assert from "node:assert/strict";
   * const notifier = new Notifier();
   * const seen: string[] = [];
   * notifier.subscribe((event) => void seen.push(event.type));
   * notifier.promptsListChanged();
   * assert.deepEqual(seen, ["prompts_list_changed"]);
   * ```
   */
  promptsListChanged(): void {
    this.publish({ type: "prompts_list_changed" });
  }

  /**
   * Announces that the resource list changed.
   *
   * @example
   * ```ts
   * import { Notifier } from "@anubis/core";
   * import assert from "node:assert/strict";
   * const notifier = new Notifier();
   * const seen: string[] = [];
   * notifier.subscribe((event) => void seen.push(event.type));
   * notifier.resourcesListChanged();
   * assert.deepEqual(seen, ["resources_list_changed"]);
   * ```
   */
  resourcesListChanged(): void {
    this.publish({ type: "resources_list_changed" });
  }

  /**
   * Announces that a resource changed.
   *
   * @param uri The resource URI.
   *
   * @example
   * ```ts
   * import { Notifier } from "@anubis/core";
   * import assert from "node:assert/strict";
   * const notifier = new Notifier();
   * const uris: string[] = [];
   * notifier.subscribe((event) => {
   *   if (event.type === "resource_updated") uris.push(event.uri);
   * });
   * notifier.resourceUpdated("file:///notes/1");
   * assert.deepEqual(uris, ["file:///notes/1"]);
   * ```
   */
  resourceUpdated(uri: string): void {
    this.publish({ type: "resource_updated", uri });
  }

  #deliver(event: ChangeEvent, skip?: ReadonlySet<string>): string[] {
    const delivered: string[] = [];
    for (const listener of [...this.#listeners]) {
      try {
        const served = listener(event, skip);
        if (served) delivered.push(...served);
      } catch (error) {
        logger.error("listener.failed", "change listener failed", { error });
      }
    }
    return delivered;
  }
}
