/**
 * Change notifications a server publishes (list changes and resource
 * updates), delivered by the engine to legacy sessions and to stateless
 * `subscriptions/listen` streams, and, with a {@link NotificationBus}, to
 * those of the other instances serving it.
 *
 * @module
 */

import type { JsonRpcNotification } from "./json_rpc.ts";
import type { BusMessage, NotificationBus } from "./notification_bus.ts";
import type { ServerCapabilities } from "./types.ts";

/**
 * One change.
 *
 * @example
 * ```ts
 * import type { ChangeEvent } from "@anubis/core";
 * const event: ChangeEvent = { type: "resource_updated", uri: "file:///notes/1" };
 * ```
 */
export type ChangeEvent =
  | { type: "tools_list_changed" }
  | { type: "prompts_list_changed" }
  | { type: "resources_list_changed" }
  | { type: "resource_updated"; uri: string };

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
 * const log: ChangeListener = (event) => console.log(event.type);
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
 * const notifier = new Notifier();
 * const stop = notifier.subscribe((event) => console.log(event.type));
 * notifier.toolsListChanged(); // logs "tools_list_changed"
 * stop();
 * ```
 */
export class Notifier {
  #listeners = new Set<ChangeListener>();
  #bus?: NotificationBus;

  /**
   * Registers a listener.
   *
   * @param listener Called for every change, local or from another instance.
   * @returns A function that unregisters it.
   *
   * @example
   * ```ts
   * import { Notifier } from "@anubis/core";
   * const notifier = new Notifier();
   * const stop = notifier.subscribe((event) => console.log(event));
   * notifier.resourceUpdated("file:///notes/1"); // logs { type: "resource_updated", uri: "file:///notes/1" }
   * stop();
   * notifier.resourceUpdated("file:///notes/2"); // logs nothing
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
   * const sent: BusMessage[] = [];
   * const notifier = new Notifier();
   * const disconnect = notifier.connect({ publish: (m) => sent.push(m), subscribe: () => () => {} });
   * notifier.promptsListChanged();
   * console.log(sent); // [ { event: { type: "prompts_list_changed" }, delivered: [] } ]
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
   * const seen: ChangeEvent[] = [];
   * const notifier = new Notifier();
   * notifier.subscribe((event) => void seen.push(event));
   * notifier.publish({ type: "resources_list_changed" });
   * console.log(seen); // [ { type: "resources_list_changed" } ]
   * ```
   */
  publish(event: ChangeEvent): void {
    const delivered = this.#deliver(event);
    this.#bus?.publish({ event, delivered });
  }

  /**
   * Announces that the tool list changed.
   *
   * @example
   * ```ts
   * import { defineServer } from "@anubis/core";
   * const server = defineServer({ name: "s", version: "1.0.0" });
   * server.notify.subscribe((event) => console.log(event.type));
   * server.notify.toolsListChanged(); // logs "tools_list_changed"
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
   * const notifier = new Notifier();
   * notifier.subscribe((event) => console.log(event.type));
   * notifier.promptsListChanged(); // logs "prompts_list_changed"
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
   * const notifier = new Notifier();
   * notifier.subscribe((event) => console.log(event.type));
   * notifier.resourcesListChanged(); // logs "resources_list_changed"
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
   * const notifier = new Notifier();
   * notifier.subscribe((event) => {
   *   if (event.type === "resource_updated") console.log(event.uri);
   * });
   * notifier.resourceUpdated("file:///notes/1"); // logs "file:///notes/1"
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
        console.error("anubis: change listener failed:", error);
      }
    }
    return delivered;
  }
}
