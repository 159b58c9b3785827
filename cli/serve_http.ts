/**
 * `serve --http`: the server on Streamable HTTP until the signal aborts,
 * with the stores the flags name.
 *
 * @module
 */

import type { EventStore, McpServer, NotificationBus, SessionStore } from "@anubis/core";
import { DEFAULT_KV_PATH } from "@anubis/core/kv";
import { openKvEventStore, openKvNotificationBus } from "@anubis/event-store-kv";
import { openKvSessionStore } from "@anubis/session-kv";
import { serve, type SessionSignal } from "@anubis/transport-http";
import type { ServeOptions } from "./args.ts";

/**
 * The stores `--event-store` and `--session-store` name, opened.
 *
 * @example
 * ```ts
 * import type { OpenedStores } from "@anubis/cli/serve-http";
 * const none: OpenedStores = { close() {} };
 * ```
 */
export interface OpenedStores {
  /** The event store: `true` selects the in-memory one. */
  eventStore?: EventStore | true;
  /** The session store. */
  sessionStore?: SessionStore;
  /** Closes what was opened (KV databases). */
  close(): void;
}

/** The KV path of a `kv` or `kv:PATH` flag value. */
function kvPath(flag: string): string {
  return flag === "kv" ? DEFAULT_KV_PATH : flag.slice("kv:".length);
}

/**
 * Opens the stores the flags name: `--event-store memory` is the in-process
 * store, `kv[:PATH]` a Deno KV database (default `.data/anubis.kv`) for
 * either store. Both may share one database.
 *
 * @param options The command-line options.
 * @returns The stores.
 * @throws {Error} When a database cannot be opened.
 *
 * @example
 * ```ts
 * import { openStores } from "@anubis/cli/serve-http";
 * const stores = await openStores({ eventStore: "memory" });
 * console.log(stores.eventStore); // true
 * stores.close();
 * ```
 */
export async function openStores(
  options: Pick<ServeOptions, "eventStore" | "sessionStore">,
): Promise<OpenedStores> {
  const closers: (() => void)[] = [];
  const stores: OpenedStores = { close: () => closers.forEach((close) => close()) };
  try {
    if (options.eventStore === "memory") stores.eventStore = true;
    else if (options.eventStore) {
      const store = await openKvEventStore(kvPath(options.eventStore));
      closers.push(() => store.close());
      stores.eventStore = store;
    }
    if (options.sessionStore) {
      const store = await openKvSessionStore(kvPath(options.sessionStore));
      closers.push(() => store.close());
      stores.sessionStore = store;
    }
  } catch (error) {
    stores.close();
    throw new Error(`cannot open the KV store: ${(error as Error).message}`);
  }
  return stores;
}

/**
 * The instances joined by {@link joinInstances}.
 *
 * @example
 * ```ts
 * import type { JoinedInstances } from "@anubis/cli/serve-http";
 * const alone: JoinedInstances = { leave: () => Promise.resolve() };
 * ```
 */
export interface JoinedInstances {
  /** The bus the HTTP handlers of the instances share (with KV only). */
  sessionBus?: NotificationBus<SessionSignal>;
  /** Disconnects and closes the buses. */
  leave(): Promise<void>;
}

/**
 * With `--event-store kv[:PATH]`, joins the other instances on the same
 * database: the server's notifier on a KV notification bus (the channel named
 * after the server), so a change raised on any instance reaches every
 * instance's sessions and listen streams, and a session bus for the HTTP
 * handlers (the channel `<name>/sessions`): one standalone stream per session
 * across instances, and client answers reaching the instance that asked.
 *
 * @param server The server.
 * @param options The command-line options.
 * @returns The session bus, and what leaves (nothing to do without KV).
 * @throws {Error} When the database cannot be opened.
 *
 * @example
 * ```ts
 * import { defineServer } from "@anubis/core";
 * import { joinInstances } from "@anubis/cli/serve-http";
 * const joined = await joinInstances(defineServer({ name: "s", version: "1" }), {
 *   eventStore: "kv::memory:",
 * });
 * console.log(joined.sessionBus !== undefined); // true
 * await joined.leave();
 * ```
 */
export async function joinInstances(
  server: McpServer,
  options: Pick<ServeOptions, "eventStore">,
): Promise<JoinedInstances> {
  if (!options.eventStore?.startsWith("kv")) return { leave: () => Promise.resolve() };
  const path = kvPath(options.eventStore);
  const cannotOpen = (error: unknown) => {
    throw new Error(`cannot open the KV store: ${(error as Error).message}`);
  };
  const changes = await openKvNotificationBus(path, { channel: server.info.name })
    .catch(cannotOpen);
  const sessions = await openKvNotificationBus<SessionSignal>(path, {
    channel: `${server.info.name}/sessions`,
  }).catch(async (error) => {
    await changes.close();
    return cannotOpen(error);
  });
  const disconnect = server.notify.connect(changes);
  return {
    sessionBus: sessions,
    async leave() {
      disconnect();
      await changes.close();
      await sessions.close();
    },
  };
}

/**
 * Serves over Streamable HTTP and prints one line with the endpoint URL on
 * stderr (`anubis: listening on http://127.0.0.1:8080/mcp`). With KV stores
 * it joins the other instances on the database ({@link joinInstances}).
 *
 * @param server The server.
 * @param options The command-line options.
 * @param signal Stops serving.
 * @returns Resolves once the server stopped and the stores are closed.
 *
 * @example
 * ```ts ignore
 * import { serveHttp } from "@anubis/cli/serve-http";
 * ```
 */
export async function serveHttp(
  server: McpServer,
  options: ServeOptions,
  signal: AbortSignal,
): Promise<void> {
  const stores = await openStores(options);
  let joined: JoinedInstances | undefined;
  try {
    joined = await joinInstances(server, options);
    const running = serve(server, {
      hostname: options.host,
      port: options.port,
      path: options.path,
      eventStore: stores.eventStore,
      sessionStore: stores.sessionStore,
      sessionBus: joined.sessionBus,
      allowedOrigins: options.allowedOrigins,
      allowedHosts: options.allowedHosts.length > 0 ? options.allowedHosts : undefined,
      signal,
      onListen: (url) => console.error(`anubis: listening on ${url.href}`),
    });
    await running.finished;
  } finally {
    await joined?.leave();
    stores.close();
  }
}
