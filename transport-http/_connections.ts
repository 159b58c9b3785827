/**
 * `serve()`'s listener: an accept loop of its own on `Deno.listen`, each
 * accepted connection served by Deno's native HTTP server (the code path of
 * `Deno.serve`, through `Deno[Deno.internal].serveHttpOnConnection`), so that
 * the server knows its connections: one shared sweep closes those that send
 * no request in time (header and idle timeouts), and running out of file
 * descriptors sheds the longest-idle connections instead of stopping.
 *
 * A request counts as in progress from the moment its header is read until
 * its handler answers (its body has been read by then), one counter per
 * connection. A connection is ended only when no handler is running on it:
 *
 * - one that started no request within the header timeout of connecting
 *   (silent, or half a header) is closed at once;
 * - one that started no new request within the idle timeout of its last
 *   answer is closed at once, unless that answer is an SSE stream: that one is
 *   shut down gracefully (Deno sends the stream in full, then closes; streams
 *   have bounds of their own). Closing at once also drops the unread rest of
 *   a body its client announced and never sent (say, after the body
 *   timeout's 408), for which Deno's graceful shutdown would wait forever,
 *   and a non-stream answer its client has not taken by then.
 *
 * Deno's graceful shutdown fails a request body still arriving, and a
 * connection shut down gracefully can no longer be closed at once (its
 * abort would throw): hence the two ways, chosen once per connection.
 *
 * @module
 */

import { logger } from "@anubis/core";
import { type AnswerWatch, answerWatch } from "./handler.ts";

/** One connection served natively: `serveHttpOnConnection`'s result. */
interface ServedConnection {
  readonly finished: Promise<void>;
  shutdown(): Promise<void>;
}

/**
 * What `serveHttpOnConnection` takes as its signal: it only registers an
 * "abort" listener there, which closes the connection at once. Handing it
 * this instead of an `AbortSignal` keeps that listener, so it is called where
 * its failure (`BadResource`, once the connection is gone or shut down
 * gracefully) can be caught, not in an event dispatch that would report it
 * as uncaught and end the process.
 */
interface CloseSignal {
  addEventListener(type: "abort", listener: () => void): void;
}

/** A request handler as Deno's server calls it. */
type DenoHandler = (request: Request) => Promise<Response>;

/**
 * The handler {@link listenConnections} serves: given the connection's
 * {@link AnswerWatch} as context, it reports each answer there (the HTTP
 * handler does, in the reaction it has anyway).
 */
type ConnectionHandler = (request: Request, watch: AnswerWatch) => Promise<Response>;

/** `Deno[Deno.internal].serveHttpOnConnection` (Deno 2.x; not a public API). */
export type ServeOnConnection = (
  conn: Deno.Conn,
  signal: CloseSignal | undefined,
  handler: DenoHandler,
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
 * import { serveOnConnection } from "./_connections.ts";
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
  /**
   * Stops accepting, lets requests in progress be answered and streams end,
   * then ends every connection (within 10 s).
   */
  shutdown(): Promise<void>;
  /** The connections open now. */
  readonly size: number;
}

/** A connection and what the sweep knows of it. */
interface Connection {
  served: ServedConnection | undefined;
  /** Closes it at once: Deno's "abort" listener (throws once it is gone). */
  closeNow: (() => void) | undefined;
  /** Requests started on it so far. */
  requests: number;
  /** Requests whose handler has not answered yet. */
  active: number;
  /** The last answer (or what the handler failed with). */
  last: unknown;
  /** The context its requests are handled with: the client's address, and where answers are counted. */
  watch: AnswerWatch | undefined;
  /** `requests` as the sweep last saw it. */
  seen: number;
  /** When it was accepted, or when the sweep last saw a request start or in progress. */
  since: number;
  /** Being ended (closed, or shut down gracefully): the sweep leaves it alone. */
  ending: boolean;
}

/** Whether an answer is an SSE stream (never cut by a timeout here). */
function isStream(answer: unknown): boolean {
  return answer instanceof Response &&
    answer.headers.get("content-type")?.startsWith("text/event-stream") === true;
}

const BACKOFF_FIRST_MS = 10;
const BACKOFF_MAX_MS = 1_000;
/** A connection younger than this (or with a request this recently) is not shed. */
const SHED_GRACE_MS = 1_000;
/** At most this many connections are shed per failed accept. */
const SHED_BATCH = 16;
/** One report of running out of descriptors per this long at most. */
const REPORT_EVERY_MS = 60_000;
/** How long `shutdown()` lets responses in progress finish before closing their connections. */
const SHUTDOWN_GRACE_MS = 10_000;

/**
 * Listens on `hostname:port` and serves each accepted connection natively
 * with `handler`, closing connections by the header and idle timeouts as the
 * module says (one sweep for all of them, every quarter of the shortest
 * timeout, at most every second) and, when accepting fails for lack of
 * descriptors, closing up to 16 of the connections quiet for longest (no
 * request in progress, no stream, none for a second) and accepting again with
 * a back-off (10 ms, doubling up to 1 s). The listener is never closed while
 * serving.
 *
 * @param serveOn Deno's per-connection server.
 * @param handler The request handler.
 * @param options Bind address, timeouts and the exhaustion report.
 * @returns The running listener.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { listenConnections, serveOnConnection } from "./_connections.ts";
 * import { ANSWERED, type AnswerWatch } from "./handler.ts";
 * const hi = (_: Request, watch: AnswerWatch) =>
 *   Promise.resolve(watch[ANSWERED][0](new Response("hi")));
 * const listener = listenConnections(serveOnConnection()!, hi, {
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

  /** Ends a connection with no handler running: at once, or after its stream. */
  const end = (connection: Connection) => {
    connection.ending = true;
    if (isStream(connection.last) || connection.closeNow === undefined) {
      connection.served?.shutdown().catch(() => {}); // Gone already.
      return;
    }
    try {
      connection.closeNow();
    } catch {
      // Gone already.
    }
  };

  const shortest = Math.min(...[headersMs, idleMs].filter((ms) => ms > 0));
  const sweeper = Number.isFinite(shortest)
    ? setInterval(() => {
      const now = Date.now();
      for (const connection of connections) {
        if (connection.requests !== connection.seen || connection.active > 0) {
          connection.seen = connection.requests;
          connection.since = now;
        } else if (!connection.ending) {
          const limit = connection.requests === 0 ? headersMs : idleMs;
          if (limit > 0 && now - connection.since >= limit) end(connection);
        }
      }
    }, Math.min(Math.max(Math.floor(shortest / 4), 25), 1_000))
    : undefined;
  if (sweeper !== undefined) Deno.unrefTimer(sweeper);

  /** Closes up to a batch of the connections quiet for longest (no handler, no stream), oldest first. */
  const shed = () => {
    const now = Date.now();
    let left = SHED_BATCH;
    for (const connection of connections) {
      if (left === 0) break;
      if (
        connection.ending || connection.active > 0 || connection.requests !== connection.seen ||
        now - connection.since < SHED_GRACE_MS || isStream(connection.last)
      ) continue;
      end(connection);
      left--;
    }
  };

  const open = (conn: Deno.Conn) => {
    const connection: Connection = {
      served: undefined,
      closeNow: undefined,
      requests: 0,
      active: 0,
      last: undefined,
      watch: undefined,
      seen: 0,
      since: Date.now(),
      ending: false,
    };
    connection.watch = answerWatch(conn.remoteAddr, (answer) => {
      connection.active--;
      connection.last = answer;
    });
    const counted: DenoHandler = (request) => {
      connection.requests++;
      connection.active++;
      return handler(request, connection.watch!);
    };
    let served: ServedConnection;
    try {
      const signal: CloseSignal = {
        addEventListener: (_type, listener) => void (connection.closeNow = listener),
      };
      served = serveOn(conn, signal, counted, onError, noop);
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
      // Requests in progress are answered (the handler cancels them with 503) and streams
      // end (the handler ended them) before their connections do, within a bound.
      const deadline = Date.now() + SHUTDOWN_GRACE_MS;
      while (
        [...connections].some((connection) => connection.active > 0) && Date.now() < deadline
      ) await new Promise((resolve) => setTimeout(resolve, 25));
      for (const connection of connections) if (!connection.ending) end(connection);
      let bound: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        Promise.all([...connections].map((connection) => connection.served?.finished)),
        new Promise((resolve) => (bound = setTimeout(resolve, Math.max(deadline - Date.now(), 0)))),
      ]);
      clearTimeout(bound);
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
