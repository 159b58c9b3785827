/**
 * `serve()`'s listener: an accept loop of its own on `Deno.listen`, each
 * accepted connection served by Deno's native HTTP server (the code path of
 * `Deno.serve`, through `Deno[Deno.internal].serveHttpOnConnection`), so that
 * the server knows its connections: one shared sweep closes those that send
 * no request in time (header and idle timeouts), and running out of file
 * descriptors sheds the longest-idle connections instead of stopping.
 *
 * A connection is closed by asking Deno's server to shut it down gracefully:
 * one that is idle or has sent part of a request's header is closed at once;
 * one with a request in flight (a body arriving, a slow handler, a stream) is
 * never cut: it is answered in full and closed after its response instead of
 * being kept alive.
 *
 * @module
 */

import { logger } from "@anubis/core";

/** One connection served natively: `serveHttpOnConnection`'s result. */
interface ServedConnection {
  readonly finished: Promise<void>;
  shutdown(): Promise<void>;
}

/** A request handler as Deno's server calls it. */
type ConnectionHandler = (
  request: Request,
  info: Deno.ServeHandlerInfo<Deno.NetAddr>,
) => Response | Promise<Response>;

/** `Deno[Deno.internal].serveHttpOnConnection` (Deno 2.x; not a public API). */
export type ServeOnConnection = (
  conn: Deno.Conn,
  signal: AbortSignal | undefined,
  handler: ConnectionHandler,
  onError: (error: unknown) => Response | Promise<Response>,
  onListen: (scheme: string) => void,
) => ServedConnection;

/**
 * Deno's per-connection server, if this Deno has it.
 *
 * @returns `serveHttpOnConnection`, or `undefined` (another runtime, or a Deno without it).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { serveOnConnection } from "./connections.ts";
 * assert.equal(typeof serveOnConnection(), "function");
 * ```
 */
export function serveOnConnection(): ServeOnConnection | undefined {
  const deno = (globalThis as { Deno?: { internal?: symbol } }).Deno;
  const key = deno?.internal;
  if (key === undefined) return undefined;
  const internals = (deno as unknown as Record<symbol, Record<string, unknown> | undefined>)[key];
  const found = internals?.serveHttpOnConnection;
  return typeof found === "function" ? found as ServeOnConnection : undefined;
}

/** Whether an error is the OS refusing a new file descriptor (EMFILE or ENFILE). */
export function isOutOfDescriptors(error: unknown): error is Error {
  return error instanceof Error && /\(os error 2[34]\)/.test(error.message);
}

/** What {@link listenConnections} needs. */
export interface ConnectionListenerOptions {
  hostname: string;
  port: number;
  /** A connection that starts no request within this long of being accepted is closed; 0: never. */
  headersTimeoutMs: number;
  /**
   * A connection that starts no request within this long of starting its
   * previous one is shut down gracefully (a response in progress finishes
   * first); 0: the header timeout bounds that wait instead.
   */
  idleTimeoutMs: number;
  /** Told once per episode (at most once a minute) that accepting failed for lack of descriptors. */
  onDescriptorsExhausted: (error: Error) => void;
}

/** A running connection listener. */
export interface ConnectionListener {
  readonly addr: Deno.NetAddr;
  /** Resolves once stopped and every connection finished; rejects if accepting failed otherwise. */
  readonly finished: Promise<void>;
  /** Stops accepting, then shuts every connection down gracefully and waits for them. */
  shutdown(): Promise<void>;
  /** The connections open now. */
  readonly size: number;
}

/** A connection and what the sweep knows of it. */
interface Connection {
  served: ServedConnection | undefined;
  /** Requests started on it so far (the one count kept per request). */
  requests: number;
  /** `requests` as the sweep last saw it. */
  seen: number;
  /** When it was accepted, or when the sweep last saw `requests` move. */
  since: number;
  /** Shut down already (it may still be finishing a response). */
  closing: boolean;
}

const BACKOFF_FIRST_MS = 10;
const BACKOFF_MAX_MS = 1_000;
/** A connection younger than this (or that started a request this recently) is not shed. */
const SHED_GRACE_MS = 1_000;
/** At most this many connections are shed per failed accept. */
const SHED_BATCH = 16;
/** One report of running out of descriptors per this long at most. */
const REPORT_EVERY_MS = 60_000;

/**
 * Listens on `hostname:port` and serves each accepted connection natively
 * with `handler`, closing connections by the header and idle timeouts (one
 * sweep for all of them, every quarter of the shortest timeout, at most
 * every second) and, when accepting fails for lack of descriptors, shedding
 * the longest-idle connections and accepting again with a back-off (10 ms,
 * doubling up to 1 s). The listener is never closed while serving.
 *
 * @param serveOn Deno's per-connection server.
 * @param handler The request handler.
 * @param options Bind address, timeouts and the exhaustion report.
 * @returns The running listener.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { listenConnections, serveOnConnection } from "./connections.ts";
 * const listener = listenConnections(serveOnConnection()!, () => new Response("hi"), {
 *   hostname: "127.0.0.1",
 *   port: 0,
 *   headersTimeoutMs: 10_000,
 *   idleTimeoutMs: 5_000,
 *   onDescriptorsExhausted: () => {},
 * });
 * const response = await fetch(`http://127.0.0.1:${listener.addr.port}/`);
 * assert.equal(await response.text(), "hi");
 * await listener.shutdown();
 * assert.equal(listener.size, 0);
 * ```
 */
export function listenConnections(
  serveOn: ServeOnConnection,
  handler: ConnectionHandler,
  options: ConnectionListenerOptions,
): ConnectionListener {
  const headersMs = options.headersTimeoutMs;
  const idleMs = options.idleTimeoutMs > 0 ? options.idleTimeoutMs : headersMs;
  const listener = Deno.listen({ hostname: options.hostname, port: options.port });
  const connections = new Set<Connection>();
  let stopped = false;

  const close = (connection: Connection) => {
    connection.closing = true;
    connection.served?.shutdown().catch(() => {}); // Already gone: nothing to close.
  };

  const shortest = Math.min(...[headersMs, idleMs].filter((ms) => ms > 0));
  const sweeper = Number.isFinite(shortest)
    ? setInterval(() => {
      const now = Date.now();
      for (const connection of connections) {
        if (connection.closing) continue;
        if (connection.requests !== connection.seen) {
          connection.seen = connection.requests;
          connection.since = now;
          continue;
        }
        const limit = connection.requests === 0 ? headersMs : idleMs;
        if (limit > 0 && now - connection.since >= limit) close(connection);
      }
    }, Math.min(Math.max(Math.floor(shortest / 4), 25), 1_000))
    : undefined;
  if (sweeper !== undefined) Deno.unrefTimer(sweeper);

  /** Closes up to a batch of connections that started nothing lately, oldest first. */
  const shed = () => {
    const now = Date.now();
    let left = SHED_BATCH;
    for (const connection of connections) {
      if (left === 0) break;
      if (
        connection.closing || connection.requests !== connection.seen ||
        now - connection.since < SHED_GRACE_MS
      ) continue;
      close(connection);
      left--;
    }
  };

  const open = (conn: Deno.Conn) => {
    const connection: Connection = {
      served: undefined,
      requests: 0,
      seen: 0,
      since: Date.now(),
      closing: false,
    };
    const counted: ConnectionHandler = (request, info) => {
      connection.requests++;
      return handler(request, info);
    };
    let served: ServedConnection;
    try {
      served = serveOn(conn, undefined, counted, onError, noop);
    } catch (error) {
      // Deno's server did not take the connection: it is still ours to close.
      try {
        conn.close();
      } catch {
        // Closed already.
      }
      logger.error("http.connection_failed", `a connection could not be served: ${error}`);
      return;
    }
    connection.served = served;
    connections.add(connection);
    served.finished.catch(() => {}).finally(() => connections.delete(connection));
  };

  let wake: (() => void) | undefined;
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      wake = () => (clearTimeout(timer), resolve());
    });
  let reportedAt = -Infinity;
  const accepting = (async () => {
    let wait = 0;
    for (;;) {
      let conn: Deno.Conn;
      try {
        conn = await listener.accept();
      } catch (error) {
        if (stopped) return;
        if (isOutOfDescriptors(error)) {
          const now = Date.now();
          if (now - reportedAt >= REPORT_EVERY_MS) {
            reportedAt = now;
            options.onDescriptorsExhausted(error);
          }
          shed();
          wait = Math.min(wait === 0 ? BACKOFF_FIRST_MS : wait * 2, BACKOFF_MAX_MS);
          await pause(wait);
          if (stopped) return;
          continue;
        }
        // A client that gave up between its handshake and the accept.
        if (
          error instanceof Deno.errors.ConnectionAborted ||
          error instanceof Deno.errors.ConnectionReset
        ) continue;
        throw error;
      }
      wait = 0;
      open(conn);
    }
  })();

  let stopping: Promise<void> | undefined;
  const shutdown = () =>
    stopping ??= (async () => {
      stopped = true;
      if (sweeper !== undefined) clearInterval(sweeper);
      wake?.();
      try {
        listener.close();
      } catch {
        // Closed already.
      }
      await accepting.catch(() => {});
      await Promise.all([...connections].map((connection) => {
        connection.closing = true;
        return connection.served?.shutdown().catch(() => {});
      }));
      await Promise.all([...connections].map((connection) => connection.served?.finished));
    })();
  const finished = accepting.then(
    () => stopping,
    async (error) => {
      await shutdown();
      throw error;
    },
  );
  return {
    addr: listener.addr as Deno.NetAddr,
    finished,
    shutdown,
    get size() {
      return connections.size;
    },
  };
}

function noop(): void {}

/** What a handler that threw is answered (the HTTP handler never rejects: a defect). */
function onError(error: unknown): Response {
  logger.error("http.handler_failed", `the request handler failed: ${error}`);
  return new Response("Internal Server Error", { status: 500 });
}
