/**
 * Change notifications a server publishes (list changes and resource
 * updates), delivered by the engine to legacy sessions and to stateless
 * `subscriptions/listen` streams.
 *
 * @module
 */

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
 * Publishes changes to every subscriber. A server's notifier is shared by all
 * transports serving it; handlers reach it as `frame.notify`.
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
  #listeners = new Set<(event: ChangeEvent) => void>();

  /**
   * Registers a listener.
   *
   * @param listener Called for every change.
   * @returns A function that unregisters it.
   */
  subscribe(listener: (event: ChangeEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Delivers a change to every listener; a throwing listener does not stop
   * the others.
   *
   * @param event The change.
   */
  publish(event: ChangeEvent): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener(event);
      } catch (error) {
        console.error("anubis: change listener failed:", error);
      }
    }
  }

  /** Announces that the tool list changed. */
  toolsListChanged(): void {
    this.publish({ type: "tools_list_changed" });
  }

  /** Announces that the prompt list changed. */
  promptsListChanged(): void {
    this.publish({ type: "prompts_list_changed" });
  }

  /** Announces that the resource list changed. */
  resourcesListChanged(): void {
    this.publish({ type: "resources_list_changed" });
  }

  /**
   * Announces that a resource changed.
   *
   * @param uri The resource URI.
   */
  resourceUpdated(uri: string): void {
    this.publish({ type: "resource_updated", uri });
  }
}
