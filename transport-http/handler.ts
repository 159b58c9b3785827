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
  type RequestId,
  type SessionStore,
  type TaskStore,
} from "@anubis/core";
import { classifyEra, type Decoded, Engine, principalOf, type Registry } from "@anubis/core/engine";
import { createDefaultRegistry } from "@anubis/dialects";
import {
  bodyBoundOf,
  BodyBudgetError,
  BodyClock,
  type BodyLimits,
  BodyTimeoutError,
  readMessage,
} from "./_body.ts";
import {
  ByteBudget,
  DEFAULT_MAX_BODY_BYTES_IN_FLIGHT,
  DEFAULT_MAX_BODY_BYTES_IN_FLIGHT_PER_CLIENT,
  DEFAULT_MAX_SESSION_BYTES,
  DEFAULT_MAX_SESSION_BYTES_PER_CLIENT,
  DEFAULT_MAX_SESSION_BYTES_TOTAL,
  RetainedBudget,
} from "./_byte_budgets.ts";
import { OriginGuard, type OriginPolicy } from "./origin.ts";
import { Cors, type CorsOptions } from "./cors.ts";
import { type AuthOptions, type Refusal, ResourceServer } from "./auth.ts";
import { type RateLimitOptions, TokenBuckets } from "./rate_limit.ts";
import { LegacyEndpoint } from "./legacy/_endpoint.ts";
import { errorResponseOf, jsonResponse } from "./_json_responses.ts";
import { type HttpLimits, StreamCounter } from "./_stream_limits.ts";
import { clientOf, type RequestContext, type ServeInfoLike } from "./request_context.ts";
import { PostStreams } from "./legacy/_post_stream.ts";
import type { SessionBusMessage } from "./legacy/session_bus_message.ts";
import { SessionTable } from "./legacy/_session_table.ts";
import { StatelessEndpoint } from "./_stateless_endpoint.ts";
import { TrustedProxies } from "./_trusted_proxy.ts";

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
   * `auth.resource` (the URL clients use, the tokens' audience) is required
   * here; `serve()` defaults it to the URL it listens on. Requests refused
   * for their token count toward the client address's bucket: `rateLimit`'s,
   * else one with its defaults (20 a second, bursts of 40) that only they
   * draw on. Off by default.
   */
  auth?: AuthOptions;
  /**
   * Limits how fast each caller may POST (tool calls included): a token
   * bucket per principal, or per client address without `auth`. Over the
   * limit, 429 with `Retry-After` and a JSON-RPC error. Off by default; in
   * memory unless `rateLimit.store` shares the buckets between instances.
   */
  rateLimit?: RateLimitOptions;
  /**
   * The proxies (IPv4 or IPv6 CIDRs, or single addresses) whose forwarded
   * headers name the client: for a request whose direct peer is in one of
   * them, the client, for the per-client bounds and the rate limit, is the
   * nearest untrusted hop of `Forwarded` (RFC 7239 `for=`) or
   * `X-Forwarded-For`, read right to left (a request carrying both counts at
   * its peer). Default none: forwarded headers are ignored. A middleware's
   * `client` (see `RequestContext`) still wins.
   */
  trustedProxies?: readonly string[];
  /** The endpoint path (default `/mcp`); `false` serves every path (a router mounted it). */
  path?: string | false;
  /**
   * A readiness endpoint for probes: `GET <path>` (default `/ready`, never
   * the MCP path) answers 200 `{"ready":true}`, or 503
   * `{"ready":false,"problem":"…"}` while `check` returns a problem (such
   * as a KV file removed or made read-only). Without it there is none.
   */
  readiness?: { path?: string; check(): string | undefined };
  /** The dialects (default: all four). */
  registry?: Registry;
  /**
   * Makes streams resumable: an `EventStore` (in one process, a
   * `MemoryEventStore` from `@anubis/event-store-memory`; across instances,
   * a `KvEventStore`). Without it events carry per-connection ids and
   * `Last-Event-ID` is ignored. Anything else (`true`, say) is refused with
   * a `TypeError` when the handler is made.
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
   * The largest body of a POST that can only open a session (default 1
   * MiB): one with neither `Mcp-Session-Id` nor `Mcp-Method`, a legacy
   * `initialize` (any other such POST is refused whatever its body). Larger
   * ones get 413 before they are read: a session keeps at most
   * `maxSessionBytes` of its `initialize`, so megabytes of one would be read
   * and parsed only to be refused. Bodies of at most 16 KiB are not checked.
   */
  maxInitializeBodyBytes?: number;
  /**
   * The most bytes the request bodies being read may hold at once (default
   * 256 MiB). A body over 16 KiB takes what its buffer holds as it arrives
   * and gives it back once read; one whose next piece does not fit gets 503
   * with `Retry-After: 1` (and the connection is closed), while smaller
   * bodies and other requests are served. Bodies of at most 16 KiB are not
   * counted (each is bounded by its size, and counting them would cost the
   * common request).
   */
  maxBodyBytesInFlight?: number;
  /**
   * The most bytes one client's request bodies being read may hold at once
   * (default 64 MiB, a quarter of `maxBodyBytesInFlight`'s default; the client
   * as for `maxSessionsPerClient`), counted as for `maxBodyBytesInFlight`;
   * beyond it 429 with `Retry-After: 1` (and the connection is closed), so
   * one client cannot take the whole budget.
   */
  maxBodyBytesInFlightPerClient?: number;
  /**
   * The most bytes one legacy session may retain of its client's data
   * (default 64 KiB): the `capabilities` and `clientInfo` of its
   * `initialize` and its resource subscriptions, counted as their memory is
   * estimated (an object 64 bytes plus 32 and its key per entry, a string 16
   * plus 2 per character). An `initialize` over it gets 400 with -32602; a
   * `resources/subscribe` over it gets -32602.
   */
  maxSessionBytes?: number;
  /**
   * The most bytes one client's legacy sessions may retain together (default
   * 16 MiB; counted as for `maxSessionBytes`, the client as for
   * `maxSessionsPerClient`). Beyond it `initialize` gets 429 with
   * `Retry-After` (after the client's own oldest unfinished handshakes made
   * room, if it has any).
   */
  maxSessionBytesPerClient?: number;
  /**
   * The most bytes every legacy session may retain together (default 256
   * MiB; counted as for `maxSessionBytes`, restored sessions included).
   * Beyond it `initialize` gets 503 with `Retry-After` (after the oldest
   * unfinished handshakes made room, if there are any).
   */
  maxSessionBytesTotal?: number;
  /**
   * The most server-to-client requests (sampling, elicitation, roots) that
   * may wait for one legacy session's client at once (default 100); one more
   * is not sent, and the handler that asked gets -32603 saying so.
   */
  maxPendingRequestsPerSession?: number;
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
   * session whose handshake never finished makes room; else the least
   * recently used idle session of the client holding the most, if it holds
   * at least two more than the new session's client (its next request gets
   * 404, session not found); with neither, `initialize` gets 503 with a
   * `Retry-After` of when the stalest session can expire.
   */
  maxSessions?: number;
  /**
   * The most live legacy sessions one client may hold (default 1,000, a tenth
   * of the table); beyond it `initialize` gets 429 (after the client's own
   * oldest unfinished handshake made room, if it has one). The client is the
   * middleware's `client` (see `RequestContext`), else the remote address
   * `Deno.serve` passes (or the one `trustedProxies` forward): behind a
   * proxy, set `trustedProxies` (or `client`) or every client counts as one.
   */
  maxSessionsPerClient?: number;
  /**
   * A legacy session whose client never sent `notifications/initialized`
   * expires after this long without a message (default 10 s).
   */
  handshakeMs?: number;
  /**
   * With a `sessionStore`: the most bytes of session records (JSON) one
   * client's live sessions may have stored (default 16 MiB). A save past it
   * first deletes that client's own unfinished handshakes, else the request
   * gets 429 (-32603, "Session store budget exceeded") and the session ends.
   */
  maxStoredSessionBytesPerClient?: number;
  /**
   * With a `sessionStore`: the most bytes of session records all live
   * sessions may have stored (default 256 MiB); past it 503 as above.
   */
  maxStoredSessionBytes?: number;
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
  /**
   * The most open standalone and listen streams (default 1,000). When full,
   * a client's GET ends the oldest standalone stream of the client holding
   * the most, if it holds at least two more; else 503.
   */
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

/**
 * The most bytes of a refused request's body read to echo its id: an
 * announced body this small costs one parse, as a served request does.
 */
const ID_READ_BYTES = 16 * 1024;

/** The id of a decoded request, else `null`. */
function idOfDecoded(decoded: Decoded | undefined): RequestId | null {
  return decoded?.kind === "request" ? decoded.message.id : null;
}

/** What the listener calls to fix the auth resource URL of a handler made without one. */
const resourceFixers = new WeakMap<HttpHandler, (url: string) => void>();

/**
 * Fixes the auth resource URL (the tokens' audience) of a handler made by
 * {@link createHttpHandler} with `auth` and no `auth.resource`, once, to the
 * URL a listener serves (`serve()` calls it). No effect otherwise.
 *
 * @param handler The handler.
 * @param url The served URL.
 */
export function fixResource(handler: HttpHandler, url: URL): void {
  resourceFixers.get(handler)?.(url.href);
}

/** The option that lets a listener fix the auth resource URL after listening. */
export const DEFER_RESOURCE: unique symbol = Symbol("deferResource");

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
      { headers: { connection: "close" } },
    );
  }
  if (error instanceof BodyBudgetError) {
    const status = error.refused === "client" ? 429 : 503;
    logRefusal(status, `the request bodies being read are at their budget (${error.refused})`);
    return errorResponseOf(
      status,
      null,
      ErrorCode.INTERNAL_ERROR,
      `${status === 429 ? "Too Many Requests" : "Service Unavailable"}: ${error.message}; retry`,
      { headers: { "retry-after": "1", connection: "close" } },
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
 * The `eventStore` option, checked: anything but an `EventStore` (such as
 * `true`, which an old README offered for "the in-memory store") is refused
 * when the handler is made, not met as a 500 on the first request that
 * needs the store. The transport knows no store: the in-memory one is
 * `new MemoryEventStore()` from `@anubis/event-store-memory`.
 */
function eventStoreOf(store: unknown): EventStore | undefined {
  if (store === undefined) return undefined;
  const methods = store as Partial<Record<keyof EventStore, unknown>> | null;
  if (
    typeof methods?.append === "function" && typeof methods.replay === "function" &&
    typeof methods.latestId === "function" && typeof methods.delete === "function"
  ) {
    return store as EventStore;
  }
  throw new TypeError(
    `eventStore must be an EventStore (append, replay, latestId, delete), got ${
      String(store)
    }: for one process pass new MemoryEventStore() from @anubis/event-store-memory`,
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
  const eventStore = eventStoreOf(options.eventStore);
  const maxStreams = options.maxStreams ?? 1000;
  const engine = new Engine(server, {
    registry: options.registry ?? createDefaultRegistry(),
    maxSubscriptions: maxStreams,
    taskStore: options.taskStore,
  });
  const keepAliveMs = options.keepAliveMs ?? 15_000;
  const sessions = new SessionTable(engine, {
    maxSessions: options.maxSessions ?? 10_000,
    maxSessionsPerClient: options.maxSessionsPerClient ?? 1_000,
    idleMs: options.sessionIdleMs ?? 30 * 60_000,
    handshakeMs: options.handshakeMs,
    sessionStore: options.sessionStore,
    maxStoredBytesPerClient: options.maxStoredSessionBytesPerClient,
    maxStoredBytes: options.maxStoredSessionBytes,
    sessionBus: options.sessionBus,
    retained: new RetainedBudget(
      options.maxSessionBytes ?? DEFAULT_MAX_SESSION_BYTES,
      options.maxSessionBytesPerClient ?? DEFAULT_MAX_SESSION_BYTES_PER_CLIENT,
      options.maxSessionBytesTotal ?? DEFAULT_MAX_SESSION_BYTES_TOTAL,
    ),
    maxPendingRequests: options.maxPendingRequestsPerSession,
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
  const legacy = new LegacyEndpoint({
    engine,
    sessions,
    streams,
    limits,
    posts,
    principalOf: options.auth && principalOf,
  });
  const stateless = new StatelessEndpoint(engine, streams, limits);
  const cors = options.cors && new Cors(options.cors);
  const guard = new OriginGuard(
    cors === undefined || options.allowedOrigins === "*" ? options : {
      allowedHosts: options.allowedHosts,
      allowedOrigins: [...(options.allowedOrigins ?? []), ...cors.origins],
    },
  );
  const path = options.path ?? "/mcp";
  const readiness = options.readiness;
  const readinessPath = readiness?.path ?? "/ready";
  const auth = options.auth && new ResourceServer(options.auth, path === false ? "/" : path);
  const deferred = (options as { [DEFER_RESOURCE]?: boolean })[DEFER_RESOURCE] === true;
  if (auth !== undefined && !auth.hasResource && !deferred) {
    // Taken from each request's Host, the audience would be the client's to choose.
    throw new TypeError(
      "auth.resource is required: the URL clients use, which tokens must carry as audience",
    );
  }
  const maxBodyBytes = options.maxBodyBytes ?? 4 * 1024 * 1024;
  const maxInitializeBodyBytes = options.maxInitializeBodyBytes ?? 1024 * 1024;
  const bodyTimeoutMs = options.bodyTimeoutMs ?? 30_000;
  const clock = bodyTimeoutMs > 0 ? new BodyClock(bodyTimeoutMs) : undefined;
  const bodies = new ByteBudget(
    options.maxBodyBytesInFlight ?? DEFAULT_MAX_BODY_BYTES_IN_FLIGHT,
    options.maxBodyBytesInFlightPerClient ?? DEFAULT_MAX_BODY_BYTES_IN_FLIGHT_PER_CLIENT,
  );
  // Made once: a read allocates nothing for its limits.
  const bodyLimits: BodyLimits = {
    maxBytes: maxBodyBytes,
    clock,
    budget: bodies,
    openingMaxBytes: maxInitializeBodyBytes,
  };
  const idReadLimits: BodyLimits = { maxBytes: ID_READ_BYTES, clock };

  const buckets = options.rateLimit && new TokenBuckets(options.rateLimit);
  // Requests refused for their token take from their client address's bucket:
  // `rateLimit`'s when set, else one of the rate limit's defaults that only
  // refused tokens draw on, so guessing tokens is bounded without a flag.
  const refusedBuckets = buckets ?? (auth && new TokenBuckets({}));
  const proxies = options.trustedProxies?.length
    ? new TrustedProxies(options.trustedProxies)
    : undefined;
  // The context with the client named by trusted proxies' forwarded headers.
  const forwarded = (request: Request, context?: RequestContext): RequestContext | undefined => {
    if (context === undefined || typeof context.client === "string") return context;
    const peer = clientOf(context);
    if (peer === undefined) return context;
    const named: RequestContext = { client: proxies!.clientOf(request.headers, peer) };
    if (context.assigns) named.assigns = context.assigns;
    if (context.authInfo !== undefined) named.authInfo = context.authInfo;
    return named;
  };
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
    if (wait > 0) return await tooMany(request, wait, caller);
    return await admitted(request, context);
  };

  /** The 429 of a caller over its rate limit, echoing the request's id if cheap to read. */
  const tooMany = async (request: Request, wait: number, caller?: string): Promise<Response> => {
    logRefusal(429, "rate limit exceeded", caller);
    return errorResponseOf(
      429,
      await readableId(request),
      -32000,
      "Too Many Requests: rate limit exceeded",
      { data: { retryAfterMs: wait }, headers: { "retry-after": String(Math.ceil(wait / 1000)) } },
    );
  };

  /**
   * The id of a request refused before its body was read, when that is
   * cheap: a POST whose announced body is at most {@link ID_READ_BYTES}
   * (read under the body clock); else `null`, the body cancelled unread.
   */
  const readableId = async (request: Request): Promise<RequestId | null> => {
    const length = request.headers.get("content-length");
    if (request.method !== "POST" || length === null || !(Number(length) <= ID_READ_BYTES)) {
      await request.body?.cancel();
      return null;
    }
    return await readMessage(request, idReadLimits).then(idOfDecoded, () => null);
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
    readMessage(request, bodyLimits, context).then(
      (decoded) => serveDecoded(request, decoded, context),
      unreadable,
    );

  const serveDecoded = (
    request: Request,
    decoded: Decoded | undefined,
    context?: RequestContext,
  ): Response | Promise<Response> => {
    if (decoded === undefined) {
      const bound = bodyBoundOf(request, maxBodyBytes, maxInitializeBodyBytes);
      return errorResponseOf(
        413,
        null,
        ErrorCode.INVALID_REQUEST,
        bound < maxBodyBytes
          ? `Payload Too Large: a request without Mcp-Session-Id (an initialize) may carry at most ${bound} bytes`
          : `Payload Too Large: the body exceeds ${maxBodyBytes} bytes`,
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
    if ("refusal" in outcome) return await unauthenticated(request, outcome.refusal, context);
    // Not a spread: Deno's handler info (the context without a middleware)
    // has getters that build objects on every read.
    const authed: RequestContext = { authInfo: outcome.info };
    if (context?.assigns) authed.assigns = context.assigns;
    // The per-client caps count an authenticated caller by its principal.
    const principal = principalOf(outcome.info);
    const client = principal !== undefined ? `principal:${principal}` : clientOf(context);
    if (client !== undefined) authed.client = client;
    const response = await route(request, authed);
    // A 403 of the engine: a scoped tool/resource/prompt, answered with the step-up challenge.
    return response.status === 403 ? await auth!.stepUp(response) : response;
  };

  /**
   * The answer to a request refused for its token. A bad or missing token
   * (400, 401) counts toward the client address's rate limit (there is no
   * principal), so guessing tokens is limited like calling; a 503 (the
   * verifier could not tell) does not.
   */
  const unauthenticated = async (
    request: Request,
    refusal: Refusal,
    context?: RequestContext,
  ): Promise<Response> => {
    const client = clientOf(context);
    if (refusedBuckets !== undefined && refusal.status < 403) {
      let wait = refusedBuckets.take(client ?? "");
      if (typeof wait !== "number") wait = await wait;
      if (wait > 0) return await tooMany(request, wait, client);
    }
    logRefusal(refusal.status, refusal.message, client);
    return auth!.respond(refusal, await readableId(request));
  };

  const handle = (request: Request, context?: RequestContext): Promise<Response> => {
    if (proxies !== undefined) context = forwarded(request, context);
    if (auth !== undefined && auth.isMetadataPath(pathOf(request.url))) {
      if (request.method === "GET") return refuse(request, auth.metadata());
      // A browser's preflight of the metadata (it may send MCP-Protocol-Version).
      if (request.method === "OPTIONS") {
        return refuse(
          request,
          cors !== undefined
            ? cors.preflight(request)
            : new Response(null, { status: 405, headers: { allow: "GET" } }),
        );
      }
    }
    if (path !== false && pathOf(request.url) !== path) {
      if (readiness && request.method === "GET" && pathOf(request.url) === readinessPath) {
        const problem = readiness.check();
        return refuse(
          request,
          jsonResponse(
            problem === undefined ? { ready: true } : { ready: false, problem },
            problem === undefined ? 200 : 503,
          ),
        );
      }
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
            { headers: { allow: ALLOW } },
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
  const built = Object.defineProperties(handler, {
    engine: { value: engine, enumerable: true },
    sessionCount: { get: () => sessions.size, enumerable: true },
    openStreams: { get: () => streams.open, enumerable: true },
    sweep: { value: () => sessions.sweep(true) },
    close: {
      value: () => {
        posts?.close();
        engine.close();
        stateless.close();
        sessions.close();
      },
    },
  }) as HttpHandler;
  if (auth !== undefined && deferred) resourceFixers.set(built, (url) => auth.fixResource(url));
  return built;
}
