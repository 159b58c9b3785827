/**
 * `serve()`: the handler on `Deno.serve`, with DNS-rebinding defaults chosen
 * from the bind address.
 *
 * @module
 */

import type { McpServer } from "@anubis/core";
import { createHttpHandler, type HttpHandler, type HttpHandlerOptions } from "./handler.ts";
import { isLoopbackHost } from "./origin.ts";

/**
 * Options of {@link serve}.
 *
 * @example
 * ```ts
 * import type { ServeOptions } from "@anubis/transport-http";
 * const options: ServeOptions = { hostname: "127.0.0.1", port: 0, eventStore: true };
 * ```
 */
export interface ServeOptions extends HttpHandlerOptions {
  /** The bind address (default `127.0.0.1`). */
  hostname?: string;
  /** The port (default 8080; 0 picks a free one). */
  port?: number;
  /** Stops the server (as `shutdown()` does). */
  signal?: AbortSignal;
  /** Called once listening, with the endpoint URL. */
  onListen?: (url: URL) => void;
}

/**
 * A running server.
 *
 * @example
 * ```ts
 * import type { RunningServer } from "@anubis/transport-http";
 * const describe = (running: RunningServer) => running.url.href;
 * ```
 */
export interface RunningServer {
  /** The endpoint URL, with the real port. */
  readonly url: URL;
  /** The handler (its engine, session count). */
  readonly handler: HttpHandler;
  /** Resolves when the server has stopped. */
  readonly finished: Promise<void>;
  /** Closes every stream and session, then stops accepting connections. */
  shutdown(): Promise<void>;
}

/**
 * Serves a server over Streamable HTTP with `Deno.serve`. On a loopback bind
 * only loopback `Host` names (and those in `allowedHosts`) are accepted; on
 * any other bind the `Host` check is off unless `allowedHosts` is given.
 *
 * @param server The defined server.
 * @param options Bind address, port, and the handler's options.
 * @returns The running server.
 *
 * @example
 * ```ts
 * import { defineServer } from "@anubis/core";
 * import { serve } from "@anubis/transport-http";
 * const running = serve(defineServer({ name: "hello", version: "1.0.0" }), { port: 0 });
 * console.log(running.url.pathname); // /mcp
 * await running.shutdown();
 * ```
 */
export function serve(server: McpServer, options: ServeOptions = {}): RunningServer {
  const hostname = options.hostname ?? "127.0.0.1";
  const local = isLoopbackHost(hostname);
  const handler = createHttpHandler(server, {
    ...options,
    allowedHosts: options.allowedHosts ?? (local ? [] : "*"),
  });
  const path = options.path === false ? "/" : options.path ?? "/mcp";
  const httpServer = Deno.serve({
    hostname,
    port: options.port ?? 8080,
    onListen: () => {},
  }, handler);
  const addr = httpServer.addr;
  const host = addr.hostname.includes(":") ? `[${addr.hostname}]` : addr.hostname;
  const url = new URL(`http://${host}:${addr.port}${path}`);
  // Idle sessions expire even without traffic; the timer never keeps the process alive.
  const sweeper = setInterval(() => handler.sweep(), 60_000);
  Deno.unrefTimer(sweeper);
  let stopping: Promise<void> | undefined;
  const shutdown = () => {
    stopping ??= (async () => {
      clearInterval(sweeper);
      options.signal?.removeEventListener("abort", onAbort);
      handler.close();
      await httpServer.shutdown();
    })();
    return stopping;
  };
  const onAbort = () => void shutdown();
  options.signal?.addEventListener("abort", onAbort, { once: true });
  if (options.signal?.aborted) onAbort();
  options.onListen?.(url);
  return { url, handler, finished: httpServer.finished, shutdown };
}
