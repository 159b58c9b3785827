/**
 * `serve --http`: the server on Streamable HTTP until the signal aborts,
 * with the stores the flags name.
 *
 * @module
 */

import type { EventStore, McpServer, SessionStore } from "@anubis/core";
import { DEFAULT_KV_PATH, openKvEventStore } from "@anubis/event-store-kv";
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
 * Serves over Streamable HTTP and prints one line with the endpoint URL on
 * stderr (`anubis: listening on http://127.0.0.1:8080/mcp`).
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
  try {
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
    stores.close();
  }
}
