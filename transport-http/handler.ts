/**
 * The Streamable HTTP handler: a Web-standard `(Request) => Promise<Response>`
 * serving both eras on one endpoint, the era chosen per request (digest
 * §2.4, §2.5). Legacy (2025-03-26 to 2025-11-25): sessions, a resumable
 * standalone GET stream, DELETE, server-to-client requests, batches for
 * 2025-03-26. Stateless (2026-07-28): POST only, the header ladder,
 * request-scoped SSE, `subscriptions/listen` streams, disconnect as
 * cancellation. No runtime globals, so it mounts in `Deno.serve`, Hono or a
 * Node adapter.
 *
 * @module
 */

import {
  ErrorCode,
  type EventStore,
  logger,
  type McpServer,
  type NotificationBus,
  type SessionStore,
  type TaskStore,
} from "@anubis/core";
import { classifyEra, type Decoded, Engine, principalOf, type Registry } from "@anubis/core/engine";
import { createDefaultRegistry } from "@anubis/dialects";
import { BodyClock, BodyTimeoutError, readMessage } from "./body.ts";
import { OriginGuard, type OriginPolicy } from "./origin.ts";
import { Cors, type CorsOptions } from "./cors.ts";
import { type AuthOptions, ResourceServer } from "./auth.ts";
import { type RateLimitOptions, TokenBuckets } from "./rate_limit.ts";
import { LegacyEndpoint } from "./legacy.ts";
import { errorResponseOf, jsonResponse } from "./responses.ts";
import { type HttpLimits, StreamCounter } from "./limits.ts";
import { clientOf, type RequestContext, type ServeInfoLike } from "./request_context.ts";
import { PostStreams } from "./post_stream.ts";
import type { SessionBusMessage } from "./session_bus_message.ts";
import { SessionTable } from "./session_table.ts";
import { StatelessEndpoint } from "./stateless.ts";

/**
 * Options of {@link createHttpHandler}. Every limit has a safe default.
 *
 * @example
 * ```ts
 * import type { HttpHandlerOptions } from "@anubis/transport-http";
 * import { MemoryEventStore } from "@anubis/event-store-memory";
 * const options: HttpHandlerOptions = {
 *   path: "/mcp",
 *   eventStore: new MemoryEventStore(),
 *   allowedOrigins: ["https://app.example.com"],
 *   maxBodyBytes: 1024 * 1024,
 * };
 * ```
 */
export interface HttpHandlerOptions extends OriginPolicy {
  /**
   * Lets browser pages on these origins call the endpoint cross-origin
   * (preflights answered, `mcp-session-id`, `mcp-protocol-version` and
   * `www-authenticate` exposed). Off by default; each origin is also an
   * allowed `Origin` of the DNS-rebinding guard.
   */
  cors?: CorsOptions;
  /**
   * Makes the endpoint an OAuth 2.1 resource server: every request needs a
   * bearer token that `auth.verifyToken` accepts (see `jwtVerifier`); the
   * RFC 9728 metadata is served at `/.well-known/oauth-protected-resource`
   * (and its path-suffixed form). Handlers see the caller as `frame.auth`.
   * Off by default.
   */
  auth?: AuthOptions;
  /**
   * Limits how fast each caller may POST (tool calls included): a token
   * bucket per principal, or per client address without `auth`. Over the
   * limit, 429 with `Retry-After` and a JSON-RPC error. Off by default; in
   * memory unless `rateLimit.store` shares the buckets between instances.
   */
  rateLimit?: RateLimitOptions;
  /** The endpoint path (default `/mcp`); `false` serves every path (a router mounted it). */
  path?: string | false;
  /** The dialects (default: all four). */
  registry?: Registry;
  /**
   * Makes streams resumable: an `EventStore` (in one process, a
   * `MemoryEventStore` from `@anubis/event-store-memory`; across instances,
   * a `KvEventStore`). Without it events carry per-connection ids and
   * `Last-Event-ID` is ignored.
   */
  eventStore?: EventStore;
  /** Persists legacy sessions so they survive restarts and move between instances. */
  sessionStore?: SessionStore;
  /**
   * Where tasks of task-capable tools are kept (default: a `MemoryTaskStore`
   * of this transport's own; share one store to answer for tasks across
   * instances).
   */
  taskStore?: TaskStore;
  /**
   * Joins the handlers of other instances that share the stores (a
   * `KvNotificationBus<SessionBusMessage>` on a channel of its own): a GET here
   * closes the session's older standalone stream there, and a client's
   * answer to a server-to-client request reaches whichever instance asked.
   */
  sessionBus?: NotificationBus<SessionBusMessage>;
  /** The largest accepted body in bytes (default 4 MiB); larger bodies get 413. */
  maxBodyBytes?: number;
  /**
   * A POST body must be fully received within this long of its read starting
   * (default 30 s; 0 turns it off), else the answer is 408 and the
   * connection is closed: a client that sends its body slowly cannot hold
   * the request forever. (`Deno.serve` has no header or idle keep-alive
   * timeout to set; see the README.)
   */
  bodyTimeoutMs?: number;
  /**
   * The most live legacy sessions (default 10,000). When full, the oldest
   * session whose handshake never finished makes room; with none, `initialize`
   * gets 503 with a `Retry-After` of when the stalest session can expire.
   */
  maxSessions?: number;
  /**
   * The most live legacy sessions one client may hold (default 1,000, a tenth
   * of the table); beyond it `initialize` gets 429 (after the client's own
   * oldest unfinished handshake made room, if it has one). The client is the
   * middleware's `client` (see `RequestContext`), else the remote address
   * `Deno.serve` passes: behind a proxy, set `client` or every client
   * counts as one.
   */
  maxSessionsPerClient?: number;
  /**
   * A legacy session whose client never sent `notifications/initialized`
   * expires after this long without a message (default 10 s).
   */
  handshakeMs?: number;
  /**
   * The most entries in a JSON-RPC batch (2025-03-26; default 1,000). A longer
   * batch gets one -32600 error (HTTP 400), not an answer per entry.
   */
  maxBatchEntries?: number;
  /**
   * The most bytes of JSON in a batch's answer (default 8 MiB); responses past
   * it become short -32603 errors for their ids.
   */
  maxBatchAnswerBytes?: number;
  /** The most open standalone and listen streams (default 1,000); beyond it 503. */
  maxStreams?: number;
  /**
   * The most open standalone and listen streams one client may hold (default
   * 100); beyond it 429. The client as for `maxSessionsPerClient`.
   */
  maxStreamsPerClient?: number;
  /** A legacy session idle this long expires (default 30 minutes); also the session store TTL. */
  sessionIdleMs?: number;
  /** How long a dropped standalone stream's events wait for a reconnect (default 60 s). */
  streamGraceMs?: number;
  /** Keep-alive comment interval on open streams (default 15 s; 0 turns it off). */
  keepAliveMs?: number;
  /** The `retry:` of priming events, in milliseconds (default 3 s). */
  retryMs?: number;
}

/**
 * A Streamable HTTP handler: call it with a `Request`; `close()` ends every
 * stream and session.
 *
 * @example
 * ```ts
 * import type { HttpHandler } from "@anubis/transport-http";
 * const mount = (handler: HttpHandler) => (request: Request) => handler(request);
 * ```
 */
export interface HttpHandler {
  /**
   * Serves one request. Never rejects. The second argument carries what a
   * middleware attached; `Deno.serve`'s handler info is accepted and ignored.
   */
  (request: Request, context?: RequestContext | ServeInfoLike): Promise<Response>;
  /** The engine serving the server (one per handler). */
  readonly engine: Engine;
  /** The number of live legacy sessions. */
  readonly sessionCount: number;
  /** The number of open standalone (GET) and listen streams. */
  readonly openStreams: number;
  /**
   * Expires idle sessions now. Requests do it as they arrive; a server that
   * may sit without traffic calls it on a timer (`serve()` does).
   */
  sweep(): void;
  /**
   * Ends listen streams gracefully, cancels in-flight requests (answered
   * with 503), closes standalone streams and drops every session.
   */
  close(): void;
}

const ALLOW = "GET, POST, DELETE";
const JSON_TYPE = /^application\/json\s*(;|$)/i;

/** The path of a request URL, without parsing the whole URL. */
function pathOf(url: string): string {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  if (start === -1) return "/";
  let end = url.length;
  const query = url.indexOf("?", start);
  if (query !== -1) end = query;
  const hash = url.indexOf("#", start);
  if (hash !== -1 && hash < end) end = hash;
  return url.slice(start, end);
}

/** Answers a request without reading its body, which is cancelled first. */
async function refuse(request: Request, response: Response): Promise<Response> {
  await request.body?.cancel();
  return response;
}

/** Logs a refused request with its reason (never a credential) for the operator. */
function logRefusal(status: number, reason: string, client?: string): void {
  logger.info("request.refused", `refused a request with ${status}: ${reason}`, {
    status,
    reason,
    client,
  });
}

/** The reason of an authentication refusal: its challenge's `error_description`. */
function authReason(response: Response): string {
  const challenge = response.headers.get("www-authenticate") ?? "";
  return /error_description="([^"]*)"/.exec(challenge)?.[1] ?? "no access token";
}

/** A defect or a failing store: answer without leaking details, keep serving. */
function failed(error: unknown): Response {
  logger.error("request.failed", "HTTP request failed", { error });
  return errorResponseOf(500, null, ErrorCode.INTERNAL_ERROR, "Internal error");
}

/** The key of {@link AnswerWatch}'s callbacks. */
export const ANSWERED: unique symbol = Symbol("anubis.answered");

/**
 * A request context that learns when the handler answered: `serve()` passes
 * one per connection (its client's address), so the handler's one reaction to
 * its work reports each answer, and no promise is added per request.
 */
export interface AnswerWatch extends ServeInfoLike {
  /** Given each answer (returned as is), and a defect (answered with a 500). */
  readonly [ANSWERED]: readonly [(answer: Response) => Response, (error: unknown) => Response];
}

/**
 * A context that tells `onAnswer` of each answer of the handler.
 *
 * @param remoteAddr The client's address (what `Deno.serve`'s info carries).
 * @param onAnswer Called with each answer, once the handler has it.
 * @returns The context to pass the handler with each request of that client.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { defineServer } from "@anubis/core";
 * import { answerWatch, createHttpHandler } from "./handler.ts";
 * const handler = createHttpHandler(defineServer({ name: "s", version: "1.0.0" }));
 * const seen: number[] = [];
 * const watch = answerWatch({ hostname: "127.0.0.1" }, (answer) => seen.push(answer.status));
 * const answer = await handler(new Request("http://127.0.0.1/mcp", { method: "PUT" }), watch);
 * await answer.body?.cancel();
 * assert.deepEqual(seen, [405]);
 * handler.close();
 * ```
 */
export function answerWatch(
  remoteAddr: unknown,
  onAnswer: (answer: Response) => void,
): AnswerWatch {
  const answered = (answer: Response) => (onAnswer(answer), answer);
  return { remoteAddr, [ANSWERED]: [answered, (error) => answered(failed(error))] };
}

/** The answer to a body that could not be read. */
function unreadable(error: unknown): Response {
  if (error instanceof BodyTimeoutError) {
    return errorResponseOf(
      408,
      null,
      ErrorCode.INVALID_REQUEST,
      `Request Timeout: ${error.message}`,
      undefined,
      { connection: "close" },
    );
  }
  // The client went away mid-body (or sent a broken one): its fault, not
  // a defect to log, and most likely nobody reads this answer.
  return errorResponseOf(
    400,
    null,
    ErrorCode.INVALID_REQUEST,
    "Bad Request: the body could not be read",
  );
}

/**
 * Creates the Streamable HTTP handler of a server. One engine serves every
 * request; nothing is constructed per request beyond the request's own state.
 *
 * @param server The defined server.
 * @param options Endpoint, stores, security and limits.
 * @returns The handler.
 *
 * @example
 * ```ts
 * import { defineServer } from "@anubis/core";
 * import { createHttpHandler } from "@anubis/transport-http";
 * import assert from "node:assert/strict";
 * const handler = createHttpHandler(defineServer({ name: "hello", version: "1.0.0" }));
 * const response = await handler(new Request("http://localhost/mcp", { method: "GET" }));
 * assert.equal(response.status, 400); // no session
 * await response.body?.cancel();
 * handler.close();
 * ```
 */
export function createHttpHandler(
  server: McpServer,
  options: HttpHandlerOptions = {},
): HttpHandler {
  const maxStreams = options.maxStreams ?? 1000;
  const engine = new Engine(server, {
    registry: options.registry ?? createDefaultRegistry(),
    maxSubscriptions: maxStreams,
    taskStore: options.taskStore,
  });
  const eventStore = options.eventStore;
  const keepAliveMs = options.keepAliveMs ?? 15_000;
  const sessions = new SessionTable(engine, {
    maxSessions: options.maxSessions ?? 10_000,
    maxSessionsPerClient: options.maxSessionsPerClient ?? 1_000,
    idleMs: options.sessionIdleMs ?? 30 * 60_000,
    handshakeMs: options.handshakeMs,
    sessionStore: options.sessionStore,
    sessionBus: options.sessionBus,
    stream: {
      eventStore,
      retryMs: options.retryMs ?? 3_000,
      graceMs: options.streamGraceMs ?? 60_000,
      keepAliveMs,
    },
  });
  const streams = new StreamCounter(maxStreams, options.maxStreamsPerClient ?? 100);
  const limits: HttpLimits = {
    maxStreams,
    keepAliveMs,
    resumable: eventStore !== undefined,
    maxBatchEntries: options.maxBatchEntries,
    maxBatchAnswerBytes: options.maxBatchAnswerBytes,
  };
  const posts = eventStore &&
    new PostStreams(eventStore, { retryMs: options.retryMs ?? 3_000, keepAliveMs });
  // With auth, a legacy session belongs to the principal that opened it.
  const legacy = new LegacyEndpoint(
    engine,
    sessions,
    streams,
    limits,
    posts,
    options.auth && principalOf,
  );
  const stateless = new StatelessEndpoint(engine, streams, limits);
  const cors = options.cors && new Cors(options.cors);
  const guard = new OriginGuard(
    cors === undefined || options.allowedOrigins === "*" ? options : {
      allowedHosts: options.allowedHosts,
      allowedOrigins: [...(options.allowedOrigins ?? []), ...cors.origins],
    },
  );
  const path = options.path ?? "/mcp";
  const auth = options.auth && new ResourceServer(options.auth, path === false ? "/" : path);
  const maxBodyBytes = options.maxBodyBytes ?? 4 * 1024 * 1024;
  const bodyTimeoutMs = options.bodyTimeoutMs ?? 30_000;
  const clock = bodyTimeoutMs > 0 ? new BodyClock(bodyTimeoutMs) : undefined;

  const buckets = options.rateLimit && new TokenBuckets(options.rateLimit);
  // Not async: an async function allocates its frame and promises on every
  // call, more than a continuation does.
  const post = (request: Request, context?: RequestContext): Promise<Response> =>
    buckets !== undefined ? limited(request, context) : admitted(request, context);

  const limited = async (request: Request, context?: RequestContext): Promise<Response> => {
    // The caller: its principal, else what identifies the client (a middleware's
    // `client` key, else the remote address), as the per-client caps count it.
    const caller = principalOf(context?.authInfo) ?? clientOf(context);
    let wait = buckets!.take(caller ?? "");
    if (typeof wait !== "number") wait = await wait;
    if (wait > 0) {
      logRefusal(429, "rate limit exceeded", caller);
      return await refuse(
        request,
        errorResponseOf(
          429,
          null,
          -32000,
          "Too Many Requests: rate limit exceeded",
          { retryAfterMs: wait },
          { "retry-after": String(Math.ceil(wait / 1000)) },
        ),
      );
    }
    return await admitted(request, context);
  };

  // The last `Content-Type` and its verdict: clients repeat theirs on every
  // request, and comparing strings is cheaper than running the pattern.
  let lastType: string | null = null;
  let lastTypeIsJson = false;
  const admitted = (request: Request, context?: RequestContext): Promise<Response> => {
    const type = request.headers.get("content-type");
    if (type !== lastType) {
      lastType = type;
      lastTypeIsJson = type !== null && JSON_TYPE.test(type);
    }
    if (!lastTypeIsJson) {
      return refuse(
        request,
        errorResponseOf(
          415,
          null,
          ErrorCode.INVALID_REQUEST,
          "Unsupported Media Type: Content-Type must be application/json",
        ),
      );
    }
    return readAndServe(request, context);
  };

  const readAndServe = (request: Request, context?: RequestContext): Promise<Response> =>
    readMessage(request, maxBodyBytes, clock).then(
      (decoded) => serveDecoded(request, decoded, context),
      unreadable,
    );

  const serveDecoded = (
    request: Request,
    decoded: Decoded | undefined,
    context?: RequestContext,
  ): Response | Promise<Response> => {
    if (decoded === undefined) {
      return errorResponseOf(
        413,
        null,
        ErrorCode.INVALID_REQUEST,
        `Payload Too Large: the body exceeds ${maxBodyBytes} bytes`,
      );
    }
    switch (decoded.kind) {
      case "invalid":
        return jsonResponse(decoded.error, 400);
      case "batch":
        return legacy.batch(request, decoded.entries, context);
      case "request":
      case "notification": {
        const claim = classifyEra(decoded.message);
        if (claim.era === "stateless") {
          return stateless.post(request, decoded.message, claim.version, context);
        }
        return stateless.unclaimed(request, decoded.message) ??
          legacy.post(request, decoded.message, context);
      }
      default:
        return legacy.post(request, decoded.message, context);
    }
  };

  // Not async, so routing costs no suspended frame of its own: the handler
  // below awaits (and catches) whatever it returns.
  const authenticated = async (request: Request, context?: RequestContext) => {
    const outcome = await auth!.authenticate(request);
    if ("response" in outcome) {
      logRefusal(outcome.response.status, authReason(outcome.response), clientOf(context));
      return await refuse(request, outcome.response);
    }
    // Not a spread: Deno's handler info (the context without a middleware)
    // has getters that build objects on every read.
    const authed: RequestContext = { authInfo: outcome.info };
    if (context?.assigns) authed.assigns = context.assigns;
    // The per-client caps count an authenticated caller by its principal.
    const principal = principalOf(outcome.info);
    const client = principal !== undefined ? `principal:${principal}` : clientOf(context);
    if (client !== undefined) authed.client = client;
    return await route(request, authed);
  };

  const handle = (request: Request, context?: RequestContext): Promise<Response> => {
    if (
      auth !== undefined && request.method === "GET" && auth.isMetadataPath(pathOf(request.url))
    ) {
      return refuse(request, auth.metadata(request));
    }
    if (path !== false && pathOf(request.url) !== path) {
      return refuse(request, new Response("Not Found", { status: 404 }));
    }
    const refusal = guard.check(request);
    if (refusal) {
      logRefusal(refusal.status, refusal.message, clientOf(context));
      return refuse(
        request,
        errorResponseOf(refusal.status, null, ErrorCode.INVALID_REQUEST, refusal.message),
      );
    }
    if (auth !== undefined && request.method !== "OPTIONS") return authenticated(request, context);
    return route(request, context);
  };

  const route = (request: Request, context?: RequestContext): Promise<Response> => {
    switch (request.method) {
      case "POST":
        return post(request, context);
      case "GET":
        return legacy.get(request, context);
      case "DELETE":
        return legacy.delete(request, context);
      case "OPTIONS":
        if (cors !== undefined) return refuse(request, cors.preflight(request));
        // falls through
      default:
        return refuse(
          request,
          errorResponseOf(
            405,
            null,
            ErrorCode.INVALID_REQUEST,
            `Method Not Allowed: ${request.method}`,
            undefined,
            { allow: ALLOW },
          ),
        );
    }
  };

  const decorated = async (request: Request, context?: RequestContext): Promise<Response> => {
    try {
      return cors!.decorate(request, await handle(request, context));
    } catch (error) {
      return failed(error);
    }
  };

  // Not async: without CORS the answer is handle()'s, with one catch.
  const handler = (
    request: Request,
    context?: RequestContext | ServeInfoLike,
  ): Promise<Response> => {
    // serve()'s connections learn of each answer in the reaction that catches defects.
    const watch = (context as Partial<AnswerWatch> | undefined)?.[ANSWERED];
    // Deno.serve's info has neither field, so it reads as no context.
    if (cors !== undefined) {
      const answer = decorated(request, context as RequestContext | undefined);
      return watch === undefined ? answer : answer.then(watch[0]);
    }
    try {
      const answer = handle(request, context as RequestContext | undefined);
      return watch === undefined ? answer.then(undefined, failed) : answer.then(watch[0], watch[1]);
    } catch (error) {
      return Promise.resolve(watch === undefined ? failed(error) : watch[1](error));
    }
  };
  return Object.defineProperties(handler, {
    engine: { value: engine, enumerable: true },
    sessionCount: { get: () => sessions.size, enumerable: true },
    openStreams: { get: () => streams.open, enumerable: true },
    sweep: { value: () => sessions.sweep(true) },
    close: {
      value: () => {
        engine.close();
        stateless.close();
        sessions.close();
      },
    },
  }) as HttpHandler;
}
