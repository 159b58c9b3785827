/**
 * `serve()`: the handler on Deno's native HTTP server, each connection
 * accepted by an accept loop of its own so that connections slow to send a
 * request or idle between requests are closed (header and idle timeouts, on
 * by default), with DNS-rebinding defaults chosen from the bind address and
 * accepting that outlives running out of file descriptors.
 *
 * @module
 */

import { logger, type McpServer } from "@anubis/core";
import {
  createHttpHandler,
  DEFER_RESOURCE,
  fixResource,
  type HttpHandler,
  type HttpHandlerOptions,
} from "./handler.ts";
import { isLoopbackHost } from "./origin.ts";
import { isOutOfDescriptors, listenConnections, serveOnConnection } from "./_connections.ts";

/**
 * Options of {@link serve}.
 *
 * @example
 * ```ts
 * import type { ServeOptions } from "@anubis/transport-http";
 * import { MemoryEventStore } from "@anubis/event-store-memory";
 * const options: ServeOptions = {
 *   hostname: "127.0.0.1",
 *   port: 0,
 *   eventStore: new MemoryEventStore(),
 * };
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
  /**
   * A connection must send its first request's whole header within this long
   * of connecting, else it is closed: one that sends nothing or half a header
   * holds no descriptor longer (default 10 s; the idle timeout bounds the
   * header of each request after the first). 0 turns it off.
   */
  headersTimeoutMs?: number;
  /**
   * A kept-alive connection that starts no new request within this long of
   * its previous one being answered is closed (default 5 s). A handler still
   * running (its body arriving, a slow tool) holds it open, and an SSE
   * stream still being sent then is never cut: it is sent in full, and the
   * connection closed after it instead of kept alive. A plain answer its
   * client has not finished reading by then is cut (a reader that slow holds
   * a descriptor too). 0: no idle timeout of its own, the header timeout then
   * bounds the wait for the next request.
   */
  idleTimeoutMs?: number;
  /**
   * Called when accepting a connection failed for lack of file descriptors
   * (`EMFILE`, `ENFILE`): `serve()` keeps listening, closes up to 16 of the
   * connections quiet for longest, oldest first (never one with a request in
   * progress or an SSE stream, nor one active in the last second), and
   * accepts again after 10 ms,
   * then twice as long each time up to 1 s, until a descriptor is free.
   * Connections already open go on being served. Default: one line on stderr,
   * at most once a minute.
   */
  onDescriptorsExhausted?: (error: Error) => void;
}

/** The default header timeout of `serve()` and `serveNode()`. */
export const DEFAULT_HEADERS_TIMEOUT_MS = 10_000;
/** The default idle timeout of `serve()` and `serveNode()`. */
export const DEFAULT_IDLE_TIMEOUT_MS = 5_000;

const RELISTEN_FIRST_MS = 50;
const RELISTEN_MAX_MS = 1000;

/** The report of the `Deno.serve` fallback running out of descriptors: one line in the operator's log. */
export const reportExhausted = (error: Error): void =>
  logger.error(
    "listen.failed",
    `${
      error.message.replace(/^Error: /, "")
    }: no new connection can be accepted; listening again once descriptors free up`,
  );

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

/** The default report of running out of descriptors while serving: one line in the operator's log. */
const reportShedding = (error: Error): void =>
  logger.error(
    "accept.failed",
    `${
      error.message.replace(/^Error: /, "")
    }: new connections wait; closing the connections idle longest and accepting again as descriptors free up`,
  );

/**
 * Serves a server over Streamable HTTP on Deno's native HTTP server (that of
 * `Deno.serve`). With `auth` and no `auth.resource`, the resource URL (the
 * tokens' audience) is the URL it listens on (`url`), never a request's `Host`:
 * on any bind but the one clients use (behind a proxy, on `0.0.0.0`), set
 * `auth.resource`. Connection timeouts are on by default: a connection that
 * sends no request's header within {@link ServeOptions.headersTimeoutMs} of
 * connecting, or no new request within {@link ServeOptions.idleTimeoutMs} of
 * its previous answer, is closed (a request in progress or an SSE stream is
 * never cut), so clients that merely hold sockets cannot use up the
 * process's descriptors.
 * On a loopback bind only loopback `Host` names (and those in `allowedHosts`)
 * are accepted; on any other bind the `Host` check is off unless
 * `allowedHosts` is given. When the process runs out of file descriptors
 * anyway, the server keeps listening, closes the connections quiet longest
 * and accepts again as soon as descriptors free up (see
 * {@link ServeOptions.onDescriptorsExhausted}). On a Deno without the
 * per-connection server it relies on (`Deno[Deno.internal].serveHttpOnConnection`)
 * it serves on `Deno.serve`, without the timeouts, and says so once.
 *
 * @param server The defined server.
 * @param options Bind address, port, and the handler's options.
 * @returns The running server.
 *
 * @example
 * ```ts
 * import { defineServer } from "@anubis/core";
 * import { serve } from "@anubis/transport-http";
 * import assert from "node:assert/strict";
 * const running = serve(defineServer({ name: "hello", version: "1.0.0" }), { port: 0 });
 * assert.equal(running.url.pathname, "/mcp");
 * await running.shutdown();
 * ```
 */
export function serve(server: McpServer, options: ServeOptions = {}): RunningServer {
  const serveOn = serveOnConnection();
  if (serveOn === undefined) return serveWithoutTimeouts(server, options);
  const { handler, hostname, path } = servedHandler(server, options);
  const listener = listenConnections(serveOn, handler, {
    hostname,
    port: options.port ?? 8080,
    headersTimeoutMs: options.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS,
    idleTimeoutMs: options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS,
    onDescriptorsExhausted: options.onDescriptorsExhausted ?? reportShedding,
  });
  const url = urlOf(listener.addr.hostname, listener.addr.port, path);
  fixResource(handler, url);
  const shutdown = stopsWith(handler, options.signal, () => listener.shutdown());
  options.onListen?.(url);
  return { url, handler, finished: listener.finished, shutdown };
}

/** The endpoint URL of a bound address. */
function urlOf(hostname: string, port: number, path: string): URL {
  const host = hostname.includes(":") ? `[${hostname}]` : hostname;
  return new URL(`http://${host}:${port}${path}`);
}

/**
 * `serve()` on `Deno.serve`, for a Deno without `serveHttpOnConnection`: no
 * header or idle timeout (said once), and listening again when accepting ran
 * out of descriptors (`Deno.serve` stops listening then).
 */
function serveWithoutTimeouts(server: McpServer, options: ServeOptions): RunningServer {
  logger.warn(
    "timeouts.off",
    "this Deno has no per-connection HTTP server (Deno[Deno.internal].serveHttpOnConnection): " +
      "serving on Deno.serve, without header or idle timeouts; put a proxy with such timeouts in front",
  );
  const { handler, hostname, path } = servedHandler(server, options);
  const listen = (port: number) => Deno.serve({ hostname, port, onListen: () => {} }, handler);
  let httpServer = listen(options.port ?? 8080);
  const addr = httpServer.addr;
  const url = urlOf(addr.hostname, addr.port, path);
  fixResource(handler, url);
  let stopped = false;
  let wake: (() => void) | undefined;
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      wake = () => (clearTimeout(timer), resolve());
    });
  /** Listens again on the same address once a descriptor is free; false when stopped first. */
  const relisten = async (): Promise<boolean> => {
    for (let wait = RELISTEN_FIRST_MS;; wait = Math.min(wait * 2, RELISTEN_MAX_MS)) {
      await pause(wait);
      if (stopped) return false;
      try {
        httpServer = listen(addr.port);
        return true;
      } catch (error) {
        // The old listener may still hold the port for a moment.
        if (!isOutOfDescriptors(error) && !(error instanceof Deno.errors.AddrInUse)) throw error;
      }
    }
  };
  const finished = (async () => {
    for (;;) {
      try {
        return await httpServer.finished;
      } catch (error) {
        if (stopped || !isOutOfDescriptors(error)) throw error;
        (options.onDescriptorsExhausted ?? reportExhausted)(error);
        if (!await relisten()) return;
      }
    }
  })();
  const shutdown = stopsWith(handler, options.signal, async () => {
    stopped = true;
    wake?.();
    await httpServer.shutdown().catch(() => {}); // A listener that failed is already down.
    await finished.catch(() => {});
  });
  options.onListen?.(url);
  return { url, handler, finished, shutdown };
}

/**
 * The handler a listener mounts, with the bind's defaults: on a loopback bind
 * only loopback `Host` names (and `allowedHosts`) are accepted; on any other
 * the `Host` check is off unless `allowedHosts` is given.
 *
 * @param server The server.
 * @param options The listener's options.
 * @returns The handler, the bind address and the endpoint path.
 *
 * @example
 * ```ts
 * import { defineServer } from "@anubis/core";
 * import assert from "node:assert/strict";
 * import { servedHandler } from "./serve.ts";
 * const served = servedHandler(defineServer({ name: "s", version: "1.0.0" }), { path: false });
 * assert.equal(served.hostname, "127.0.0.1");
 * assert.equal(served.path, "/");
 * served.handler.close();
 * ```
 */
export function servedHandler(
  server: McpServer,
  options: ServeOptions,
): { handler: HttpHandler; hostname: string; path: string } {
  const hostname = options.hostname ?? "127.0.0.1";
  const local = isLoopbackHost(hostname);
  // Without auth.resource, the listener fixes it to the URL it serves.
  const handler = createHttpHandler(server, {
    ...options,
    allowedHosts: options.allowedHosts ?? (local ? [] : "*"),
    [DEFER_RESOURCE]: true,
  } as HttpHandlerOptions);
  const path = options.path === false ? "/" : options.path ?? "/mcp";
  return { handler, hostname, path };
}

/**
 * What a listener's `shutdown()` does, made once: idle sessions swept every
 * minute meanwhile (the timer never keeps the process alive); then, on
 * `shutdown()` or the signal, the handler closed (streams and sessions), then
 * the listener stopped.
 *
 * @param handler The mounted handler.
 * @param signal Stops the server when aborted.
 * @param stopListening Stops accepting and serving connections.
 * @returns `shutdown()`, which is idempotent.
 *
 * @example
 * ```ts
 * import { defineServer } from "@anubis/core";
 * import assert from "node:assert/strict";
 * import { servedHandler, stopsWith } from "./serve.ts";
 * const { handler } = servedHandler(defineServer({ name: "s", version: "1.0.0" }), {});
 * let stops = 0;
 * const shutdown = stopsWith(handler, undefined, () => Promise.resolve(void stops++));
 * await Promise.all([shutdown(), shutdown()]);
 * assert.equal(stops, 1);
 * ```
 */
export function stopsWith(
  handler: HttpHandler,
  signal: AbortSignal | undefined,
  stopListening: () => Promise<void>,
): () => Promise<void> {
  const sweeper = setInterval(() => handler.sweep(), 60_000);
  unref(sweeper);
  let stopping: Promise<void> | undefined;
  const shutdown = () => {
    stopping ??= (async () => {
      clearInterval(sweeper);
      signal?.removeEventListener("abort", onAbort);
      handler.close();
      await stopListening();
    })();
    return stopping;
  };
  const onAbort = () => void shutdown();
  signal?.addEventListener("abort", onAbort, { once: true });
  if (signal?.aborted) onAbort();
  return shutdown;
}

/** Lets a timer not keep the process alive, on Deno (an id) and on Node (an object). */
export function unref(timer: ReturnType<typeof setInterval>): void {
  if (typeof timer === "object") (timer as { unref(): void }).unref();
  else (globalThis as { Deno?: { unrefTimer(id: number): void } }).Deno?.unrefTimer(timer);
}
