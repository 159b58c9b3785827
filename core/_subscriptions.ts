/**
 * Delivery of change notifications: to legacy sessions (list changes when the
 * capability is declared, resource updates to subscribers) and to stateless
 * `subscriptions/listen` streams (only what each stream asked for, tagged with
 * its subscription id).
 *
 * @module
 */

import { ErrorCode, McpError } from "./errors.ts";
import type { JsonRpcMessage, RequestId } from "./json_rpc.ts";
import { MetaKey } from "./meta.ts";
import type { ChangeEvent } from "./notification_bus.ts";
import { changeNotification, type Notifier, sessionWantsChange } from "./notifier.ts";
import type { Session } from "./legacy/session.ts";
import type { ServerCapabilities } from "./types.ts";

/**
 * The notification types a listen stream asked for.
 *
 * @example
 * ```ts
 * import type { SubscriptionFilter } from "./_subscriptions.ts";
 * const filter: SubscriptionFilter = { toolsListChanged: true, resourceSubscriptions: ["notes://1"] };
 * ```
 */
export interface SubscriptionFilter {
  /** `notifications/tools/list_changed`. */
  toolsListChanged?: boolean;
  /** `notifications/prompts/list_changed`. */
  promptsListChanged?: boolean;
  /** `notifications/resources/list_changed`. */
  resourcesListChanged?: boolean;
  /** `notifications/resources/updated` for these URIs. */
  resourceSubscriptions?: string[];
  /** `notifications/tasks` for these tasks (the tasks extension). */
  taskIds?: string[];
}

/** A listen stream to open (`SubscriptionHub.listen`). */
export interface ListenStream {
  /** The `subscriptions/listen` request's id. */
  readonly id: RequestId;
  /** What the client asked to hear. */
  readonly filter: SubscriptionFilter;
  /** Writes to the stream. */
  readonly emit: (message: JsonRpcMessage) => Promise<void>;
  /** Aborts when the client goes away. */
  readonly signal: AbortSignal;
  /** Aborts when the server closes (the stream then ends gracefully). */
  readonly closing: AbortSignal;
  /** The tasks whose notifications it gets (the caller checked that they are its own). */
  readonly taskIds?: string[];
}

interface Listener {
  id: RequestId;
  filter: SubscriptionFilter;
  uris: Set<string>;
  tasks: Set<string>;
  emit(message: JsonRpcMessage): Promise<void>;
}

/** Fans change events out to sessions and listen streams; one per engine. */
export class SubscriptionHub {
  /** The live legacy sessions that receive change notifications. */
  readonly sessions: Set<Session> = new Set();
  readonly #listeners = new Set<Listener>();
  readonly #capabilities: ServerCapabilities;
  readonly #maxListeners: number;
  readonly #stop: () => void;

  readonly #notifier: Notifier;
  /**
   * Subscribes to a server's notifier.
   *
   * @param notifier The server's notifier.
   * @param capabilities The server's capabilities (what it may announce).
   * @param maxListeners The most listen streams open at once.
   */
  constructor(notifier: Notifier, capabilities: ServerCapabilities, maxListeners: number) {
    this.#capabilities = capabilities;
    this.#maxListeners = maxListeners;
    this.#notifier = notifier;
    this.#stop = notifier.subscribe((event, skip) => this.#deliver(event, skip));
  }

  /** The number of open listen streams. */
  get listenerCount(): number {
    return this.#listeners.size;
  }

  /** The part of a filter this server honours, given its capabilities. */
  honoured(filter: SubscriptionFilter): SubscriptionFilter {
    const caps = this.#capabilities;
    const out: SubscriptionFilter = {};
    if (filter.toolsListChanged && caps.tools?.listChanged) out.toolsListChanged = true;
    if (filter.promptsListChanged && caps.prompts?.listChanged) out.promptsListChanged = true;
    if (filter.resourcesListChanged && caps.resources?.listChanged) out.resourcesListChanged = true;
    if (filter.resourceSubscriptions && caps.resources?.subscribe) {
      out.resourceSubscriptions = [...filter.resourceSubscriptions];
    }
    return out;
  }

  /**
   * Opens a listen stream: acknowledges it, then delivers matching changes
   * until its `signal` or `closing` aborts.
   *
   * @returns `true` when the server closed the stream gracefully (the caller
   * answers the listen request), `false` when the client went away.
   */
  async listen(stream: ListenStream): Promise<boolean> {
    const { id, emit, signal, closing, taskIds } = stream;
    if (this.#listeners.size >= this.#maxListeners) {
      throw new McpError(ErrorCode.INTERNAL_ERROR, "Too many open subscriptions");
    }
    const filter = this.honoured(stream.filter);
    if (taskIds?.length) filter.taskIds = taskIds;
    await emit({
      jsonrpc: "2.0",
      method: "notifications/subscriptions/acknowledged",
      params: { _meta: { [MetaKey.subscriptionId]: id }, notifications: filter },
    });
    const listener: Listener = {
      id,
      filter,
      uris: new Set(filter.resourceSubscriptions),
      tasks: new Set(taskIds),
      emit,
    };
    this.#listeners.add(listener);
    try {
      await new Promise<void>((resolve) => {
        if (signal.aborted || closing.aborted) return resolve();
        signal.addEventListener("abort", () => resolve(), { once: true });
        closing.addEventListener("abort", () => resolve(), { once: true });
      });
    } finally {
      this.#listeners.delete(listener);
    }
    return !signal.aborted;
  }

  /**
   * Sends a task's new state (`notifications/tasks`, a `DetailedTask`) to the
   * listen streams that asked for that task.
   */
  deliverTask(taskId: string, task: Record<string, unknown>): void {
    for (const listener of this.#listeners) {
      if (!listener.tasks.has(taskId)) continue;
      const params = { ...task, _meta: { [MetaKey.subscriptionId]: listener.id } };
      listener.emit({ jsonrpc: "2.0", method: "notifications/tasks", params }).catch(() => {});
    }
  }

  /** Stops listening to the notifier. */
  close(): void {
    this.#stop();
  }

  /**
   * Delivers a change to the matching listen streams and legacy sessions
   * (except those in `skip`) and returns the ids of the sessions served.
   */
  #deliver(event: ChangeEvent, skip?: ReadonlySet<string>): string[] {
    const served: string[] = [];
    const message = changeNotification(event);
    for (const listener of this.#listeners) {
      if (!matches(listener, event)) continue;
      const params = { ...message.params, _meta: { [MetaKey.subscriptionId]: listener.id } };
      listener.emit({ ...message, params }).catch(() => {});
    }
    const caps = this.#capabilities;
    for (const session of this.sessions) {
      if (!session.dialect || !session.initialized || session.closed || !session.onMessage) {
        continue;
      }
      const wanted = sessionWantsChange(event, caps, (uri) => session.isSubscribed(uri));
      if (!wanted || (session.id !== undefined && skip?.has(session.id))) continue;
      if (session.id !== undefined) served.push(session.id);
      const sent = Promise.resolve(session.onMessage(message, session)).catch(() => {});
      // Across instances, the session's stream records it before the raiser answers.
      this.#notifier.track(sent);
    }
    return served;
  }
}

function matches(listener: Listener, event: ChangeEvent): boolean {
  switch (event.type) {
    case "tools_list_changed":
      return !!listener.filter.toolsListChanged;
    case "prompts_list_changed":
      return !!listener.filter.promptsListChanged;
    case "resources_list_changed":
      return !!listener.filter.resourcesListChanged;
    case "resource_updated":
      return listener.uris.has(event.uri);
  }
}
