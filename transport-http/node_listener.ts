/**
 * `serveNode()`: the handler on a `node:http` server, which closes
 * connections that are slow to send their headers or idle between requests,
 * as `serve()` does on Deno. It runs on Node and on Deno alike, through
 * `@hono/node-server`'s request listener: the listener for Node.
 *
 * @module
 */

import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { type AddressInfo, connect, type Socket } from "node:net";
import { getRequestListener } from "@hono/node-server";
import type { McpServer } from "@anubis/core";
import {
  DEFAULT_HEADERS_TIMEOUT_MS,
  DEFAULT_IDLE_TIMEOUT_MS,
  reportExhausted,
  type RunningServer,
  servedHandler,
  type ServeOptions,
  stopsWith,
  unref,
} from "./serve.ts";
import { fixResource } from "./handler.ts";

/**
 * Options of {@link serveNode}: those of `serve()`, the connection timeouts
 * included (`headersTimeoutMs`, default 10 s, Node's `headersTimeout`;
 * `idleTimeoutMs`, default 5 s, Node's `keepAliveTimeout`).
 *
 * @example
 * ```ts
 * import type { NodeServeOptions } from "@anubis/transport-http/node";
 * import assert from "node:assert/strict";
 * const options: NodeServeOptions = { port: 0, headersTimeoutMs: 5_000, idleTimeoutMs: 5_000 };
 * assert.equal(options.idleTimeoutMs, 5_000);
 * ```
 */
export type NodeServeOptions = ServeOptions;

/**
 * Serves a server over Streamable HTTP on a `node:http` server that closes
 * connections slow to send their headers ({@link NodeServeOptions.headersTimeoutMs})
 * or idle between requests ({@link NodeServeOptions.idleTimeoutMs}), so clients
 * that merely hold sockets cannot use up the process's file descriptors. The
 * body timeout (`bodyTimeoutMs`) and every other option work as with `serve()`.
 * Should accepting still fail for lack of descriptors on Deno (a flood of new
 * connections faster than the timeouts shed them; Node goes on accepting by
 * itself), the server notices within
 * about four seconds, reports it ({@link ServeOptions.onDescriptorsExhausted})
 * and listens again once descriptors are free. On Deno it costs about twice
 * the CPU per request of `serve()` (Deno's `node:http` layer), which has the
 * same timeouts: use `serve()` there.
 *
 * @param server The defined server.
 * @param options Bind address, port, timeouts, and the handler's options.
 * @returns The running server, once it listens.
 *
 * @example
 * ```ts
 * import { defineServer } from "@anubis/core";
 * import { serveNode } from "@anubis/transport-http/node";
 * import assert from "node:assert/strict";
 * const running = await serveNode(defineServer({ name: "hello", version: "1.0.0" }), {
 *   port: 0,
 *   idleTimeoutMs: 2_000,
 * });
 * assert.equal(running.url.pathname, "/mcp");
 * const pong = await fetch(running.url, { method: "OPTIONS" });
 * await pong.body?.cancel();
 * assert.equal(pong.status, 405);
 * await running.shutdown();
 * ```
 */
export async function serveNode(
  server: McpServer,
  options: NodeServeOptions = {},
): Promise<RunningServer> {
  const { handler, hostname, path } = servedHandler(server, options);
  const connections = new Map<Socket, (ms: number) => void>();
  const listener = getRequestListener((request, env) => {
    const socket = env.incoming.socket;
    return handler(request, {
      remoteAddr: { transport: "tcp", hostname: socket.remoteAddress, port: socket.remotePort },
    });
  });
  const http = createServer(listener);
  const headersMs = options.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS;
  const idleMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  // Deno's node:http does not enforce its headersTimeout on a connection that sent nothing
  // or half a header, so each connection has a timer of its own: armed when it opens and
  // after each response, disarmed when a request's headers are in. A request in flight (its
  // body has the handler's body timeout, its answer may stream) is never cut.
  http.on("connection", (socket: Socket) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const arm = (ms: number) => {
      clearTimeout(timer);
      timer = ms > 0 && !socket.destroyed ? setTimeout(() => socket.destroy(), ms) : undefined;
    };
    connections.set(socket, arm);
    socket.once("close", () => (clearTimeout(timer), connections.delete(socket)));
    arm(headersMs);
  });
  http.on("request", (request: IncomingMessage, response: ServerResponse) => {
    const arm = connections.get(request.socket);
    if (arm === undefined) return;
    arm(0);
    response.once("finish", () => arm(idleMs > 0 ? idleMs : headersMs));
  });
  http.headersTimeout = headersMs;
  http.keepAliveTimeout = idleMs;
  http.requestTimeout = 0;
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      http.once("error", reject);
      http.listen(port, hostname, () => {
        http.off("error", reject);
        resolve();
      });
    });
  await listen(options.port ?? 8080);
  const addr = http.address() as AddressInfo;
  const host = addr.address.includes(":") ? `[${addr.address}]` : addr.address;
  const url = new URL(`http://${host}:${addr.port}${path}`);
  fixResource(handler, url);
  // Node's accepting survives running out of descriptors; Deno's node:http does not.
  const onDeno = (globalThis as { Deno?: unknown }).Deno !== undefined;
  const watchdog = onDeno && new AcceptWatchdog(http, addr, async (firstOfEpisode) => {
    if (firstOfEpisode) {
      (options.onDescriptorsExhausted ?? reportExhausted)(
        new Error("Too many open files (os error 24)"),
      );
    }
    http.close();
    // The port is free again at once; a failed try is retried by the next probe.
    await listen(addr.port).catch(() => {});
  });
  let stopped!: () => void;
  const finished = new Promise<void>((resolve) => (stopped = resolve));
  const shutdown = stopsWith(handler, options.signal, async () => {
    if (watchdog) watchdog.stop();
    await new Promise<void>((resolve) => {
      http.close(() => resolve());
      // Kept-alive and streaming connections would hold close() open.
      http.closeAllConnections();
    });
    stopped();
  });
  options.onListen?.(url);
  return { url, handler, finished, shutdown };
}

const PROBE_EVERY_MS = 2_000;
const PROBE_WAIT_MS = 2_000;

/**
 * Deno's `node:http` stops accepting for good, silently, once accepting failed
 * for lack of file descriptors. Every two seconds this connects to the server
 * itself; a connection the server never sees means its accepting stopped, and
 * `relisten` starts it again (the timeouts will have freed descriptors by
 * then), reporting once until a probe is seen again. It runs on Deno only:
 * Node's accepting survives, and a probe missed under load would report an
 * exhaustion that did not happen and listen again, refusing connections
 * meanwhile.
 */
class AcceptWatchdog {
  readonly #timer: ReturnType<typeof setInterval>;
  #expecting: { port: number; seen: () => void } | undefined;
  #probing = false;
  // Accepting stopped and has not been seen again: one report per episode.
  #down = false;

  constructor(
    http: Server,
    addr: AddressInfo,
    relisten: (firstOfEpisode: boolean) => Promise<void>,
  ) {
    const host = addr.address === "0.0.0.0"
      ? "127.0.0.1"
      : addr.address === "::"
      ? "::1"
      : addr.address;
    http.on("connection", (socket: Socket) => {
      const expecting = this.#expecting;
      if (expecting !== undefined && socket.remotePort === expecting.port) expecting.seen();
    });
    this.#timer = setInterval(async () => {
      if (this.#probing) return;
      this.#probing = true;
      try {
        const seen = await this.#probe(host, addr.port);
        if (seen === false) await relisten(!this.#down);
        if (seen !== undefined) this.#down = !seen;
      } finally {
        this.#probing = false;
      }
    }, PROBE_EVERY_MS);
    unref(this.#timer);
  }

  /** Whether the server saw a connection to it; `undefined` when none could be made. */
  async #probe(host: string, port: number): Promise<boolean | undefined> {
    const socket = connect({ host, port });
    try {
      const localPort = await new Promise<number | undefined>((resolve) => {
        socket.once("connect", () => resolve(socket.localPort));
        socket.once("error", () => resolve(undefined));
      });
      if (localPort === undefined) return undefined;
      return await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), PROBE_WAIT_MS);
        this.#expecting = { port: localPort, seen: () => (clearTimeout(timer), resolve(true)) };
      });
    } finally {
      this.#expecting = undefined;
      socket.destroy();
    }
  }

  stop(): void {
    clearInterval(this.#timer);
  }
}
