/**
 * `serve --http`: the server on Streamable HTTP until the signal aborts,
 * with the stores the flags name.
 *
 * @module
 */

import type { EventStore, McpServer, SessionStore } from "@anubis/core";
import { DEFAULT_KV_PATH } from "@anubis/core/kv";
import { openKvEventStore, openKvNotificationBus } from "@anubis/event-store-kv";
import { openKvSessionStore } from "@anubis/session-kv";
import { serve } from "@anubis/transport-http";
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
 * With `--event-store kv[:PATH]`, joins the server's notifier to the other
 * instances on the same database (a KV notification bus on the channel named
 * after the server), so a change raised on any instance reaches every
 * instance's sessions and listen streams.
 *
 * @param server The server.
 * @param options The command-line options.
 * @returns Disconnects and closes the bus (nothing to do without KV).
 * @throws {Error} When the database cannot be opened.
 *
 * @example
 * ```ts
 * import { defineServer } from "@anubis/core";
 * import { joinInstances } from "@anubis/cli/serve-http";
 * const leave = await joinInstances(defineServer({ name: "s", version: "1" }), {
 *   eventStore: "kv::memory:",
 * });
 * await leave();
 * ```
 */
export async function joinInstances(
  server: McpServer,
  options: Pick<ServeOptions, "eventStore">,
): Promise<() => Promise<void>> {
  if (!options.eventStore?.startsWith("kv")) return () => Promise.resolve();
  const bus = await openKvNotificationBus(kvPath(options.eventStore), {
    channel: server.info.name,
  }).catch((error) => {
    throw new Error(`cannot open the KV store: ${(error as Error).message}`);
  });
  const disconnect = server.notify.connect(bus);
  return async () => {
    disconnect();
    await bus.close();
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
  let leave: () => Promise<void> = () => Promise.resolve();
  try {
    leave = await joinInstances(server, options);
    const running = serve(server, {
      hostname: options.host,
      port: options.port,
      path: options.path,
      eventStore: stores.eventStore,
      sessionStore: stores.sessionStore,
      allowedOrigins: options.allowedOrigins,
      allowedHosts: options.allowedHosts.length > 0 ? options.allowedHosts : undefined,
      signal,
      onListen: (url) => console.error(`anubis: listening on ${url.href}`),
    });
    await running.finished;
  } finally {
    await leave();
    stores.close();
  }
}
