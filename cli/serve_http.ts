/**
 * `serve --http`: the server on Streamable HTTP until the signal aborts,
 * with the stores the flags name.
 *
 * @module
 */

import type { EventStore, McpServer, SessionStore } from "@anubis/core";
import { serve } from "@anubis/transport-http";
import type { ServeOptions } from "./args.ts";

/**
 * Resolves `--event-store`: `memory` is the in-process store; `kv[:PATH]`
 * is not part of this build yet.
 *
 * @param flag The flag's value.
 * @returns `true` for the memory store, `undefined` when off.
 * @throws {Error} For a store this build does not have.
 *
 * @example
 * ```ts
 * import { eventStoreOf } from "@anubis/cli/serve-http";
 * console.log(eventStoreOf("memory")); // true
 * ```
 */
export function eventStoreOf(flag: string | undefined): EventStore | true | undefined {
  if (flag === undefined) return undefined;
  if (flag === "memory") return true;
  throw new Error(`--event-store ${flag} is not available yet (use memory)`);
}

/**
 * Resolves `--session-store` (`kv[:PATH]`, not part of this build yet).
 *
 * @param flag The flag's value.
 * @returns `undefined` when off.
 * @throws {Error} For a store this build does not have.
 *
 * @example
 * ```ts
 * import { sessionStoreOf } from "@anubis/cli/serve-http";
 * console.log(sessionStoreOf(undefined)); // undefined
 * ```
 */
export function sessionStoreOf(flag: string | undefined): SessionStore | undefined {
  if (flag === undefined) return undefined;
  throw new Error(`--session-store ${flag} is not available yet`);
}

/**
 * Serves over Streamable HTTP and prints one line with the endpoint URL on
 * stderr (`anubis: listening on http://127.0.0.1:8080/mcp`).
 *
 * @param server The server.
 * @param options The command-line options.
 * @param signal Stops serving.
 * @returns Resolves once the server stopped.
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
  const running = serve(server, {
    hostname: options.host,
    port: options.port,
    path: options.path,
    eventStore: eventStoreOf(options.eventStore),
    sessionStore: sessionStoreOf(options.sessionStore),
    allowedOrigins: options.allowedOrigins,
    allowedHosts: options.allowedHosts.length > 0 ? options.allowedHosts : undefined,
    signal,
    onListen: (url) => console.error(`anubis: listening on ${url.href}`),
  });
  await running.finished;
}
