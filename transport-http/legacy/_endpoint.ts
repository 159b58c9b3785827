/**
 * The legacy era (2025-03-26, 2025-06-18, 2025-11-25) on HTTP: `initialize`
 * mints a session, POSTs answer with JSON or SSE, notifications and
 * responses get 202, GET opens the session's standalone stream, DELETE ends
 * the session, batches for 2025-03-26.
 *
 * @module
 */

import { ErrorCode, logger, type RequestId } from "@anubis/core";
import {
  batchContentRefusal,
  batchSessionRefusal,
  batchSizeRefusal,
  boundBatchAnswer,
  type Decoded,
  encodeOutbound,
  type Engine,
  errorResponse,
  type Exchange,
  type JsonRpcMessage,
  LOG_LEVELS,
  type Reply,
  reportUnencodable,
  splitBatch,
} from "@anubis/core/engine";
import { type RetainedBudget, retainedBytes, type RetainedRefusal } from "../_byte_budgets.ts";
import { type HttpLimits, type StreamCounter, streamRefusal } from "../_stream_limits.ts";
import { postStreamCursorOf, type PostStreams } from "./_post_stream.ts";
import { clientOf, exchangeOf, type RequestContext } from "../request_context.ts";
import { joinControls, respond } from "../_respond.ts";
import { accepted, errorResponseOf, jsonTextResponse } from "../_json_responses.ts";
import type { SessionEntry } from "./_session_entry.ts";
import type { SessionTable } from "./_session_table.ts";
import { notStored, SessionNotStored } from "./_session_store_budget.ts";
import type { SseStream } from "../_sse_stream.ts";

/** The JSON-RPC code the legacy transport uses for an unknown session (as the official SDK). */
const SESSION_NOT_FOUND = -32001;

/**
 * Whether the last `encodeOutbound` of an `initialize` answer met a value JSON
 * cannot encode: one function for every answer instead of a closure each
 * (the encoding is synchronous, so the flag is read before anything else runs).
 */
let unencodableSeen = false;
function noteUnencodable(problem: Parameters<typeof reportUnencodable>[0]): void {
  unencodableSeen = true;
  reportUnencodable(problem);
}

/**
 * Tells whether an `Accept` header admits a media type (wildcards count; no
 * header admits everything).
 *
 * @param header The `Accept` header, or `null`.
 * @param type A media type such as `text/event-stream`.
 * @returns `true` when admitted.
 *
 * @example
 * ```ts
 * import { accepts } from "./_endpoint.ts";
 * import assert from "node:assert/strict";
 * assert.equal(accepts("application/json", "text/event-stream"), false);
 * assert.equal(accepts("text/*;q=0.9", "text/event-stream"), true);
 * ```
 */
export function accepts(header: string | null, type: string): boolean {
  if (header === null) return true;
  const family = type.slice(0, type.indexOf("/")) + "/*";
  for (const part of header.split(",")) {
    const semi = part.indexOf(";");
    const media = (semi === -1 ? part : part.slice(0, semi)).trim().toLowerCase();
    if (media === type || media === "*/*" || media === family) return true;
  }
  return false;
}

function requestIdOf(message: JsonRpcMessage): RequestId | null {
  return "method" in message && "id" in message ? message.id : null;
}

/**
 * A full session table: 503, whether the session is new or restored, with a
 * `Retry-After` of when the table's stalest session can expire.
 */
function tooManySessions(id: RequestId | null, retryAfterSeconds: number): Response {
  logger.info("request.refused", "refused a request with 503: the session table is full", {
    status: 503,
    reason: "too many sessions",
  });
  return errorResponseOf(503, id, ErrorCode.INTERNAL_ERROR, "Too many sessions", {
    headers: {
      "retry-after": String(retryAfterSeconds),
    },
  });
}

/** The answer to a request whose session's state could not be stored. */
function notStoredResponse(refusal: SessionNotStored, id: RequestId | null = null): Response {
  return errorResponseOf(refusal.status, id, refusal.code, refusal.message, {
    headers: refusal.retryAfterSeconds === undefined
      ? undefined
      : { "retry-after": String(refusal.retryAfterSeconds) },
  });
}

/** {@link notStoredResponse} as the outcome of a request answered through `respond`. */
function notStoredOutcome(
  refusal: SessionNotStored,
  id: RequestId | null,
): { body: JsonRpcMessage; status: number } {
  return { body: errorResponse(id, refusal.code, refusal.message), status: refusal.status };
}

/**
 * What a session keeps of an `initialize` (its `capabilities` and
 * `clientInfo`), as `retainedBytes` estimates it; past `limit` the count
 * stops.
 */
function handshakeBytes(message: JsonRpcMessage, limit: number): number {
  const params = (message as { params?: { capabilities?: unknown; clientInfo?: unknown } }).params;
  if (params === null || typeof params !== "object") return 0;
  const capabilities = retainedBytes(params.capabilities, limit);
  return capabilities > limit
    ? capabilities
    : capabilities + retainedBytes(params.clientInfo, limit - capabilities);
}

/** An `initialize` whose client data is over what one session may retain: -32602, 400. */
function handshakeTooLarge(id: RequestId, budget: RetainedBudget): Response {
  logger.info("request.refused", "refused a request with 400: the handshake data is too large", {
    status: 400,
    reason: "handshake data too large",
  });
  return errorResponseOf(
    400,
    id,
    ErrorCode.INVALID_PARAMS,
    `Invalid params: the capabilities and clientInfo of an initialize may hold at most ${budget.perSession} bytes (as the server counts them), and these hold more`,
    { data: { maxSessionBytes: budget.perSession } },
  );
}

/**
 * An `initialize` whose client data does not fit the client's share (429)
 * or the server's total (503) of the retained budget, with the
 * `Retry-After` of the table's other refusals.
 */
function retainedRefusal(
  id: RequestId,
  refused: RetainedRefusal,
  budget: RetainedBudget,
  client: string | undefined,
  retryAfterSeconds: number,
): Response {
  const own = refused === "client";
  const status = own ? 429 : 503;
  const reason = own
    ? "too much session data for this client"
    : "too much session data on the server";
  logger.info("request.refused", `refused a request with ${status}: ${reason}`, {
    status,
    reason,
    client,
  });
  return errorResponseOf(
    status,
    id,
    ErrorCode.INTERNAL_ERROR,
    own
      ? `Too much session data for this client: its sessions may retain ${budget.perClient} bytes together`
      : `Too much session data: the server's sessions may retain ${budget.max} bytes together`,
    { headers: { "retry-after": String(retryAfterSeconds) } },
  );
}

/** Gives a stream's slot back when the stream ends, or now if it already has. */
function releaseOnEnd(stream: SseStream, release: () => void): void {
  if (stream.open) stream.signal.addEventListener("abort", release, { once: true });
  else release();
}

/**
 * The answer when finding a session failed: the store failed, or the server
 * refused the restore; an internal error (seed 000), not the 404 of a
 * session that does not exist.
 */
function unloadable(sessionId: string, id: RequestId | null, error: unknown): Response {
  logger.error("store.failed", `session ${sessionId} could not be loaded or restored`, { error });
  if ((error as Error | undefined)?.name === "KvUnavailableError") {
    // The store's file is gone or read-only: say so, as a condition that may pass.
    return errorResponseOf(503, id, ErrorCode.INTERNAL_ERROR, (error as Error).message, {
      headers: {
        "retry-after": "1",
      },
    });
  }
  return errorResponseOf(
    500,
    id,
    ErrorCode.INTERNAL_ERROR,
    "Internal error: the session could not be loaded or restored",
  );
}

function notAcceptable(id: RequestId | null, what: string): Response {
  return errorResponseOf(
    406,
    id,
    ErrorCode.INVALID_REQUEST,
    `Not Acceptable: Accept must list ${what}`,
  );
}

/** What a {@link LegacyEndpoint} serves with. */
export interface LegacyEndpointParts {
  /** The engine. */
  engine: Engine;
  /** The session table. */
  sessions: SessionTable;
  /** The open-stream bound (standalone streams count). */
  streams: StreamCounter;
  /** Keep-alive and resumability. */
  limits: HttpLimits;
  /** Records POST streams for resumption (with an event store). */
  posts?: PostStreams;
  /**
   * Binds each session to the principal that opened it, read from the
   * request's `authInfo` (kept in the session's record, so the binding holds
   * on every instance that restores it): another principal's requests find
   * no session. Unset, sessions opened here are not bound (and a bound one
   * refuses every caller here).
   */
  principalOf?: (authInfo: unknown) => string | undefined;
}

/**
 * Serves legacy-era traffic for one handler.
 *
 * @example
 * ```ts
 * import { defineServer } from "@anubis/core";
 * import { Engine } from "@anubis/core/engine";
 * import { createDefaultRegistry } from "@anubis/dialects";
 * import { LegacyEndpoint } from "./_endpoint.ts";
 * import { SessionTable } from "./_session_table.ts";
 * import { StreamCounter } from "../_stream_limits.ts";
 * import assert from "node:assert/strict";
 * const engine = new Engine(defineServer({ name: "s", version: "1" }), {
 *   registry: createDefaultRegistry(),
 * });
 * const sessions = new SessionTable(engine, {
 *   maxSessions: 10,
 *   idleMs: 60_000,
 *   stream: { retryMs: 1000, graceMs: 1000, keepAliveMs: 0 },
 * });
 * const legacy = new LegacyEndpoint({
 *   engine,
 *   sessions,
 *   streams: new StreamCounter(10),
 *   limits: { maxStreams: 10, keepAliveMs: 0, resumable: false },
 * });
 * const response = await legacy.delete(new Request("http://localhost/mcp", { method: "DELETE" }));
 * assert.equal(response.status, 400);
 * await response.body?.cancel();
 * sessions.close();
 * engine.close();
 * ```
 */
export class LegacyEndpoint {
  readonly #engine: Engine;
  readonly #sessions: SessionTable;
  readonly #streams: StreamCounter;
  readonly #limits: HttpLimits;
  readonly #posts: PostStreams | undefined;
  readonly #principalOf: ((authInfo: unknown) => string | undefined) | undefined;
  /** The last `Accept` value seen and its verdict: clients repeat theirs on every request. */
  #lastAccept: string | null | undefined;
  #lastAcceptsBoth = false;

  /**
   * Creates the endpoint.
   *
   * @param parts What it serves with (see {@link LegacyEndpointParts}).
   */
  constructor(parts: LegacyEndpointParts) {
    this.#engine = parts.engine;
    this.#sessions = parts.sessions;
    this.#streams = parts.streams;
    this.#limits = parts.limits;
    this.#posts = parts.posts;
    this.#principalOf = parts.principalOf;
  }

  /**
   * Serves one POSTed legacy message: the caller has decided its era (its
   * `_meta` claims no stateless version), and the engine is told so.
   *
   * @param request The HTTP request.
   * @param message The decoded message.
   * @param context The middleware's facts.
   * @returns The response.
   *
   * @example
   * ```ts
   * import { defineServer } from "@anubis/core";
   * import { Engine } from "@anubis/core/engine";
   * import { createDefaultRegistry } from "@anubis/dialects";
   * import { LegacyEndpoint } from "./_endpoint.ts";
   * import { SessionTable } from "./_session_table.ts";
   * import { StreamCounter } from "../_stream_limits.ts";
   * import assert from "node:assert/strict";
   * const engine = new Engine(defineServer({ name: "s", version: "1" }), {
   *   registry: createDefaultRegistry(),
   * });
   * const stream = { retryMs: 1000, graceMs: 1000, keepAliveMs: 0 };
   * const sessions = new SessionTable(engine, { maxSessions: 10, idleMs: 60_000, stream });
   * const limits = { maxStreams: 10, keepAliveMs: 0, resumable: false };
   * const legacy = new LegacyEndpoint({ engine, sessions, streams: new StreamCounter(10), limits });
   * const url = "http://localhost/mcp";
   * const accept = "application/json, text/event-stream";
   * const clientInfo = { name: "c", version: "1" };
   * const opening = new Request(url, { method: "POST", headers: { accept } });
   * const initialized = await legacy.post(opening, {
   *   jsonrpc: "2.0",
   *   id: 1,
   *   method: "initialize",
   *   params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo },
   * });
   * const session = initialized.headers.get("mcp-session-id")!;
   * const headers = { accept, "mcp-session-id": session };
   * const ping = { jsonrpc: "2.0", id: 2, method: "ping" } as const;
   * const response = await legacy.post(new Request(url, { method: "POST", headers }), ping);
   * assert.deepEqual(await response.json(), { jsonrpc: "2.0", id: 2, result: {} });
   * sessions.close();
   * engine.close();
   * ```
   */
  post(
    request: Request,
    message: JsonRpcMessage,
    context?: RequestContext,
  ): Promise<Response> {
    // Not async, nor are the steps below: a session's notification or its
    // opening `initialize` is answered through the engine's promise alone,
    // without an async frame and its promises per step.
    try {
      const id = requestIdOf(message);
      const isRequest = id !== null;
      if (isRequest && !this.#acceptsBoth(request)) {
        return Promise.resolve(notAcceptable(id, "application/json and text/event-stream"));
      }
      if (isRequest && "method" in message && message.method === "initialize") {
        return this.#initialize(request, message, id, context);
      }
      const exchange = exchangeOf(request, context);
      const found = this.#lookup(request, id, exchange);
      if (found instanceof Response) return Promise.resolve(found);
      if (found instanceof Promise) {
        return found.then((entry) =>
          entry instanceof Response ? entry : this.#serve(entry, message, isRequest, exchange)
        );
      }
      return this.#serve(found, message, isRequest, exchange);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Serves a message of a found session; `exchange` is the request's own, which the session joins. */
  #serve(
    found: SessionEntry,
    message: JsonRpcMessage,
    isRequest: boolean,
    exchange: Exchange,
  ): Promise<Response> {
    exchange.session = found.session;
    if (!isRequest) {
      // A response may answer a request another instance sent.
      if ("method" in message) {
        if (message.method === "notifications/cancelled") this.#cancelled(found, message);
        return this.#engine.handle(message, exchange, "legacy").then(() =>
          this.#afterSave(found, accepted(), notStoredResponse)
        );
      }
      this.#sessions.answer(found, message);
      return Promise.resolve(this.#afterSave(found, accepted(), notStoredResponse));
    }
    return this.#call(found, message, exchange);
  }

  /**
   * A client cancelled one of its requests: its recorded stream, when it
   * runs here, ends now, so the client resuming it gets the replay and the
   * end, not a stream held open while the work winds down (or never does).
   */
  #cancelled(found: SessionEntry, message: JsonRpcMessage): void {
    const params = "params" in message ? message.params : undefined;
    const requestId = params?.requestId;
    if (typeof requestId !== "string" && typeof requestId !== "number") return;
    this.#posts?.cancelled(found.session.id!, requestId);
  }

  /**
   * `value` once the session's record is saved: at once, with no promise,
   * when there is nothing to save (no session store). When it cannot be
   * saved, what `refused` makes of the reason instead (never the answer of a
   * state that was not kept).
   */
  #afterSave<T>(
    found: SessionEntry,
    value: T,
    refused: (refusal: SessionNotStored, id: RequestId | null) => T,
    message?: JsonRpcMessage,
  ): T | Promise<T> {
    if (!this.#sessions.saves(found)) return value;
    return this.#persist(found).then((refusal) =>
      refusal ? refused(refusal, message ? requestIdOf(message) : null) : value
    );
  }

  /** Answers a request of a found session (JSON, or SSE once it emits). */
  #call(found: SessionEntry, message: JsonRpcMessage, exchange: Exchange): Promise<Response> {
    const posts = this.#posts;
    const sessionId = found.session.id!;
    // Not async: the outcome is the engine's reply mapped by one continuation,
    // which waits on a save only when there is a session store.
    return respond((controls) => {
      try {
        return this.#engine.handle(message, joinControls(exchange, controls), "legacy").then(
          (reply) =>
            this.#afterSave(
              found,
              reply && { body: reply.message, status: reply.status },
              notStoredOutcome,
              message,
            ),
        );
      } catch (error) {
        return Promise.reject(error);
      }
    }, {
      keepAliveMs: this.#limits.keepAliveMs,
      cancelOnDisconnect: false,
      // Where the version has them (2025-11-25), POST streams are recorded,
      // primed, and the client may be asked to poll.
      recorded: posts && found.session.dialect!.transportRules.resumablePostStreams
        ? () => posts.open(sessionId, requestIdOf(message) ?? undefined)
        : undefined,
    });
  }

  /**
   * Serves a JSON-RPC batch: only on a 2025-03-26 session, never with
   * `initialize` or a stateless request in it.
   *
   * @param request The HTTP request.
   * @param entries The classified batch entries.
   * @param context The middleware's facts.
   * @returns The response (the responses as one array, or 202).
   *
   * @example
   * ```ts
   * import { defineServer } from "@anubis/core";
   * import { Engine } from "@anubis/core/engine";
   * import { createDefaultRegistry } from "@anubis/dialects";
   * import { LegacyEndpoint } from "./_endpoint.ts";
   * import { SessionTable } from "./_session_table.ts";
   * import { StreamCounter } from "../_stream_limits.ts";
   * import assert from "node:assert/strict";
   * const engine = new Engine(defineServer({ name: "s", version: "1" }), {
   *   registry: createDefaultRegistry(),
   * });
   * const stream = { retryMs: 1000, graceMs: 1000, keepAliveMs: 0 };
   * const sessions = new SessionTable(engine, { maxSessions: 10, idleMs: 60_000, stream });
   * const limits = { maxStreams: 10, keepAliveMs: 0, resumable: false };
   * const legacy = new LegacyEndpoint({ engine, sessions, streams: new StreamCounter(10), limits });
   * const url = "http://localhost/mcp";
   * const accept = "application/json, text/event-stream";
   * const clientInfo = { name: "c", version: "1" };
   * const opening = new Request(url, { method: "POST", headers: { accept } });
   * const initialized = await legacy.post(opening, {
   *   jsonrpc: "2.0",
   *   id: 1,
   *   method: "initialize",
   *   params: { protocolVersion: "2025-03-26", capabilities: {}, clientInfo },
   * });
   * const session = initialized.headers.get("mcp-session-id")!;
   * const headers = { accept, "mcp-session-id": session };
   * const response = await legacy.batch(new Request(url, { method: "POST", headers }), [
   *   { kind: "request", message: { jsonrpc: "2.0", id: 2, method: "ping" } },
   *   { kind: "request", message: { jsonrpc: "2.0", id: 3, method: "ping" } },
   * ]);
   * assert.deepEqual((await response.json()).map((reply: { id: number }) => reply.id), [ 2, 3 ]);
   * sessions.close();
   * engine.close();
   * ```
   */
  async batch(
    request: Request,
    entries: readonly Decoded[],
    context?: RequestContext,
  ): Promise<Response> {
    const tooLong = batchSizeRefusal(entries.length, this.#limits.maxBatchEntries);
    if (tooLong) return errorResponseOf(400, null, ErrorCode.INVALID_REQUEST, tooLong);
    const { messages, errors } = splitBatch(entries);
    const refused = batchContentRefusal(messages);
    if (refused) return errorResponseOf(400, null, ErrorCode.INVALID_REQUEST, refused);
    const hasRequest = messages.some((m) => requestIdOf(m) !== null);
    if (hasRequest && !this.#acceptsBoth(request)) {
      return notAcceptable(null, "application/json and text/event-stream");
    }
    const requestExchange = exchangeOf(request, context);
    const found = await this.#lookup(request, null, requestExchange);
    if (found instanceof Response) return found;
    const unbatched = batchSessionRefusal(found.session.dialect);
    if (unbatched) return errorResponseOf(400, null, ErrorCode.INVALID_REQUEST, unbatched);
    const exchange: Exchange = { ...requestExchange, session: found.session };
    // Answers may be to requests another instance sent, as in a single POST.
    const handled: JsonRpcMessage[] = [];
    for (const message of messages) {
      if ("method" in message) handled.push(message);
      else this.#sessions.answer(found, message);
    }
    const keepAliveMs = this.#limits.keepAliveMs;
    return await respond(async ({ emit }) => {
      let responses = await this.#engine.handleBatch(handled, { ...exchange, emit });
      const refusal = await this.#persist(found);
      if (refusal) {
        // Not one answer of a state that was not kept: each request gets the refusal.
        responses = responses.map((response) =>
          errorResponse("id" in response ? response.id : null, refusal.code, refusal.message)
        );
        if (responses.length === 0) {
          return {
            body: errorResponse(null, refusal.code, refusal.message),
            status: refusal.status,
          };
        }
      }
      const all = boundBatchAnswer([...errors, ...responses], this.#limits.maxBatchAnswerBytes);
      return all.length > 0 ? { body: all, status: 200 } : undefined;
    }, {
      keepAliveMs,
      cancelOnDisconnect: false,
      // A 2025-03-26 POST stream cannot be resumed: when the client leaves,
      // nobody can receive the answers, so the batch's pending work is
      // cancelled. A batch still working after a keep-alive interval answers
      // as an SSE stream, whose keep-alive comments find a client that left.
      abandoned: hasRequest
        ? {
          requestSignal: () => request.signal,
          upgradeAfterMs: keepAliveMs,
          cancel: () => {
            for (const message of handled) {
              const id = requestIdOf(message);
              if (id !== null) found.session.cancel(id, "the client disconnected");
            }
          },
        }
        : undefined,
    });
  }

  /**
   * Opens the session's standalone stream (superseding an open one), resumed
   * after `Last-Event-ID` when an event store is configured.
   *
   * @param request The HTTP request.
   * @param context The middleware's facts (for a session restored on the way).
   * @returns The SSE response, or an error.
   *
   * @example
   * ```ts
   * import { defineServer } from "@anubis/core";
   * import { Engine } from "@anubis/core/engine";
   * import { createDefaultRegistry } from "@anubis/dialects";
   * import { LegacyEndpoint } from "./_endpoint.ts";
   * import { SessionTable } from "./_session_table.ts";
   * import { StreamCounter } from "../_stream_limits.ts";
   * import assert from "node:assert/strict";
   * const engine = new Engine(defineServer({ name: "s", version: "1" }), {
   *   registry: createDefaultRegistry(),
   * });
   * const stream = { retryMs: 1000, graceMs: 1000, keepAliveMs: 0 };
   * const sessions = new SessionTable(engine, { maxSessions: 10, idleMs: 60_000, stream });
   * const limits = { maxStreams: 10, keepAliveMs: 0, resumable: false };
   * const legacy = new LegacyEndpoint({ engine, sessions, streams: new StreamCounter(10), limits });
   * const url = "http://localhost/mcp";
   * const accept = "application/json, text/event-stream";
   * const clientInfo = { name: "c", version: "1" };
   * const opening = new Request(url, { method: "POST", headers: { accept } });
   * const initialized = await legacy.post(opening, {
   *   jsonrpc: "2.0",
   *   id: 1,
   *   method: "initialize",
   *   params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo },
   * });
   * const session = initialized.headers.get("mcp-session-id")!;
   * const headers = { accept: "text/event-stream", "mcp-session-id": session };
   * const response = await legacy.get(new Request(url, { headers }));
   * assert.equal(response.status, 200);
   * assert.equal(response.headers.get("content-type"), "text/event-stream");
   * await response.body?.cancel();
   * sessions.close();
   * engine.close();
   * ```
   */
  async get(request: Request, context?: RequestContext): Promise<Response> {
    const unsupported = this.#statelessOnly(request);
    if (unsupported) return unsupported;
    if (!accepts(request.headers.get("accept"), "text/event-stream")) {
      return notAcceptable(null, "text/event-stream");
    }
    const found = await this.#lookup(request, null, exchangeOf(request, context));
    if (found instanceof Response) return found;
    const session = found.session;
    const resumed = this.#posts && postStreamCursorOf(request.headers.get("last-event-id") ?? "");
    if (resumed) {
      return await this.#resumePost(found, resumed.key, resumed.cursor, clientOf(context));
    }
    const standalone = this.#sessions.streamOf(found);
    const client = clientOf(context);
    // A full pool may end this stream to serve a client holding fewer (the
    // client reconnects, as after any server close).
    let stream: SseStream | undefined;
    const close = () => stream?.close();
    const release = this.#streams.acquire(client, close);
    // Superseding the session's own stream needs no new slot.
    if (!release && !standalone.attached) return streamRefusal(this.#streams, null);
    const resumable = this.#limits.resumable;
    const priming = resumable && session.dialect!.transportRules.primingEvents === true;
    try {
      stream = await standalone.attach(
        resumable ? lastEventIdOf(request) : undefined,
        priming,
        resumable && this.#gapNotice(session),
      );
    } catch (error) {
      release?.();
      logger.error("store.failed", `event store failed opening the stream of ${session.id}`, {
        error,
      });
      return errorResponseOf(500, null, ErrorCode.INTERNAL_ERROR, "Event store unavailable");
    }
    // A superseded connection gave its slot back while attaching: take it.
    // This one may itself have been superseded meanwhile: it holds nothing.
    const slot = release ?? this.#streams.acquire(client, close);
    if (slot) releaseOnEnd(stream, slot);
    this.#sessions.hold(found, stream.signal);
    return stream.response({ "mcp-session-id": session.id! });
  }

  /** `GET` with the `Last-Event-ID` of a POST stream: the rest of that stream. */
  async #resumePost(
    entry: SessionEntry,
    key: number,
    cursor: number,
    client: string | undefined,
  ): Promise<Response> {
    const session = entry.session;
    const release = this.#streams.acquire(client);
    if (!release) return streamRefusal(this.#streams, null);
    let stream;
    try {
      stream = await this.#posts!.resume(session.id!, key, cursor);
    } catch (error) {
      release();
      logger.error("store.failed", `event store failed resuming a stream of ${session.id}`, {
        error,
      });
      return errorResponseOf(500, null, ErrorCode.INTERNAL_ERROR, "Event store unavailable");
    }
    if (!stream) {
      release();
      return errorResponseOf(
        400,
        null,
        ErrorCode.INVALID_REQUEST,
        "Bad Request: Last-Event-ID names no stream of this session",
      );
    }
    releaseOnEnd(stream, release);
    session.touch();
    return stream.response({ "mcp-session-id": session.id! });
  }

  /**
   * Ends a session. When the event store cannot delete the session's events
   * the answer is 500 and the session and its stream stay, so the client can
   * retry.
   *
   * @param request The HTTP request.
   * @param context The middleware's facts (for a session restored on the way).
   * @returns 200, or an error.
   *
   * @example
   * ```ts
   * import { defineServer } from "@anubis/core";
   * import { Engine } from "@anubis/core/engine";
   * import { createDefaultRegistry } from "@anubis/dialects";
   * import { LegacyEndpoint } from "./_endpoint.ts";
   * import { SessionTable } from "./_session_table.ts";
   * import { StreamCounter } from "../_stream_limits.ts";
   * import assert from "node:assert/strict";
   * const engine = new Engine(defineServer({ name: "s", version: "1" }), {
   *   registry: createDefaultRegistry(),
   * });
   * const stream = { retryMs: 1000, graceMs: 1000, keepAliveMs: 0 };
   * const sessions = new SessionTable(engine, { maxSessions: 10, idleMs: 60_000, stream });
   * const limits = { maxStreams: 10, keepAliveMs: 0, resumable: false };
   * const legacy = new LegacyEndpoint({ engine, sessions, streams: new StreamCounter(10), limits });
   * const url = "http://localhost/mcp";
   * const accept = "application/json, text/event-stream";
   * const clientInfo = { name: "c", version: "1" };
   * const opening = new Request(url, { method: "POST", headers: { accept } });
   * const initialized = await legacy.post(opening, {
   *   jsonrpc: "2.0",
   *   id: 1,
   *   method: "initialize",
   *   params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo },
   * });
   * const session = initialized.headers.get("mcp-session-id")!;
   * const headers = { "mcp-session-id": session };
   * const end = () => legacy.delete(new Request(url, { method: "DELETE", headers }));
   * assert.equal((await end()).status, 200);
   * assert.equal((await end()).status, 404); // the session is gone
   * sessions.close();
   * engine.close();
   * ```
   */
  async delete(request: Request, context?: RequestContext): Promise<Response> {
    const unsupported = this.#statelessOnly(request);
    if (unsupported) return unsupported;
    const found = await this.#lookup(request, null, exchangeOf(request, context));
    if (found instanceof Response) return found;
    try {
      await this.#sessions.end(found);
    } catch (error) {
      logger.error("store.failed", `ending session ${found.session.id} failed`, { error });
      return errorResponseOf(
        500,
        null,
        ErrorCode.INTERNAL_ERROR,
        "The session could not be ended (store failure); retry",
      );
    }
    return new Response(null, { status: 200 });
  }

  #initialize(
    request: Request,
    message: JsonRpcMessage,
    id: RequestId,
    context?: RequestContext,
  ): Promise<Response> {
    const sessionId = request.headers.get("mcp-session-id")?.trim();
    if (!sessionId) return this.#open(request, message, id, context);
    return this.#sessions.exists(sessionId).then((exists) =>
      exists
        // A session is initialized once; an unknown id is ignored (a new session is minted).
        ? errorResponseOf(
          400,
          id,
          ErrorCode.INVALID_REQUEST,
          "Invalid Request: initialize must not carry an Mcp-Session-Id (the session is initialized already)",
        )
        : this.#open(request, message, id, context)
    );
  }

  /** Opens a session for an `initialize` (its answer carries the new `Mcp-Session-Id`). */
  #open(
    request: Request,
    message: JsonRpcMessage,
    id: RequestId,
    context?: RequestContext,
  ): Promise<Response> {
    const client = clientOf(context);
    const budget = this.#sessions.retained;
    let retained = 0;
    if (budget !== undefined) {
      retained = handshakeBytes(message, budget.perSession);
      if (retained > budget.perSession) return Promise.resolve(handshakeTooLarge(id, budget));
    }
    if (this.#sessions.clientFull(client)) {
      logger.info(
        "request.refused",
        "refused a request with 429: too many sessions for this client",
        {
          status: 429,
          reason: "too many sessions for this client",
          client,
        },
      );
      return Promise.resolve(
        errorResponseOf(429, id, ErrorCode.INTERNAL_ERROR, "Too many sessions for this client", {
          headers: { "retry-after": String(this.#sessions.retryAfterSeconds) },
        }),
      );
    }
    const refused = retained === 0 ? undefined : this.#sessions.reserve(client, retained);
    if (refused !== undefined) {
      return Promise.resolve(
        retainedRefusal(id, refused, budget!, client, this.#sessions.retryAfterSeconds),
      );
    }
    const entry = this.#sessions.create(client, retained);
    if (!entry) return Promise.resolve(tooManySessions(id, this.#sessions.retryAfterSeconds));
    if (this.#principalOf) entry.session.bindOwner(this.#principalOf(context?.authInfo) ?? "");
    // The request's own exchange: the new session joins it (no copy).
    const exchange = exchangeOf(request, context);
    exchange.session = entry.session;
    return this.#engine.handle(message, exchange, "legacy").then((reply) =>
      this.#opened(entry, id, reply)
    );
  }

  /** The answer to an `initialize` the engine replied to: the session kept (and saved), or discarded. */
  #opened(
    entry: SessionEntry,
    id: RequestId,
    reply: Reply | undefined,
  ): Response | Promise<Response> {
    // An answer JSON cannot encode (an `init` error's data) becomes -32603 for the id.
    unencodableSeen = false;
    const text = reply && encodeOutbound(reply.message, noteUnencodable);
    if (!reply || text === undefined || unencodableSeen || "error" in reply.message) {
      this.#sessions.discard(entry);
      return text !== undefined
        ? jsonTextResponse(text, 400)
        : errorResponseOf(400, id, ErrorCode.INVALID_REQUEST, "initialize was not answered");
    }
    if (!this.#sessions.saves(entry)) return this.#openedResponse(entry, text);
    return this.#sessions.persist(entry).then(
      () => this.#openedResponse(entry, text),
      (error) => {
        this.#sessions.discard(entry);
        let refusal = notStored(error, entry.session.id!);
        if (error instanceof RangeError) {
          // What the client sent (its capabilities, its info) makes the record too large.
          refusal = new SessionNotStored(
            `Content Too Large: the session's record cannot be stored (${error.message})`,
            413,
            ErrorCode.INVALID_REQUEST,
            true,
          );
        }
        logger.error("store.failed", `session store refused a new session: ${refusal.message}`, {
          error,
          status: refusal.status,
        });
        return notStoredResponse(refusal, id);
      },
    );
  }

  /** The 200 that opens a session, with its id. */
  #openedResponse(entry: SessionEntry, text: string): Response {
    const { session } = entry;
    // Only when written: the message and its fields are built for nothing otherwise.
    if (logger.enabled("info")) {
      logger.info("session.opened", `session ${session.id} opened (${session.dialect?.version})`, {
        sessionId: session.id,
        protocolVersion: session.dialect?.version,
        transport: "http",
      });
    }
    return jsonTextResponse(text, 200, { "mcp-session-id": session.id! });
  }

  /**
   * Finds the session of the request, or the error response that answers it;
   * `exchange` is the request's (for a session restored on the way).
   */
  #lookup(
    request: Request,
    id: RequestId | null,
    exchange: Exchange,
  ): SessionEntry | Response | Promise<SessionEntry | Response> {
    // Not async: a live session the table answers for is found without a promise.
    const sessionId = request.headers.get("mcp-session-id")?.trim();
    if (!sessionId) {
      return errorResponseOf(
        400,
        id,
        ErrorCode.INVALID_REQUEST,
        "Bad Request: Mcp-Session-Id header is required",
      );
    }
    const principal = this.#principalOf?.(exchange.authInfo) ?? "";
    let live;
    try {
      live = this.#sessions.live(sessionId, principal);
    } catch (error) {
      return unloadable(sessionId, id, error);
    }
    if (live !== null) return this.#checked(request, id, live);
    return this.#find(request, id, exchange, sessionId, principal);
  }

  /** {@link #lookup} through the session store (or a restore). */
  async #find(
    request: Request,
    id: RequestId | null,
    exchange: Exchange,
    sessionId: string,
    principal: string,
  ): Promise<SessionEntry | Response> {
    let entry: SessionEntry | "full" | undefined;
    try {
      entry = await this.#sessions.find(sessionId, exchange, principal);
    } catch (error) {
      return unloadable(sessionId, id, error);
    }
    return this.#checked(request, id, entry);
  }

  /** The found session, or the answer when there is none or the request's version is not its own. */
  #checked(
    request: Request,
    id: RequestId | null,
    entry: SessionEntry | "full" | undefined,
  ): SessionEntry | Response {
    if (!entry) {
      // Unknown, or another principal's: the same answer either way.
      return errorResponseOf(404, id, SESSION_NOT_FOUND, "Session not found");
    }
    if (entry === "full") return tooManySessions(id, this.#sessions.retryAfterSeconds);
    const header = request.headers.get("mcp-protocol-version")?.trim();
    const version = entry.session.dialect!.version;
    if (header !== undefined && header !== version) {
      return errorResponseOf(
        400,
        id,
        ErrorCode.INVALID_REQUEST,
        `Bad Request: MCP-Protocol-Version ${header} does not match the session's ${version}`,
      );
    }
    return entry;
  }

  /**
   * Whether a resumed stream that lost events also says so as a
   * `notifications/message` warning: the session's version has the method,
   * the server declares logging, and the level the client set with
   * `logging/setLevel` (none: everything) lets a warning through, as for any
   * other log message. The `gap` event is sent regardless.
   */
  #gapNotice(session: SessionEntry["session"]): boolean {
    const dialect = session.dialect;
    if (!dialect?.serverNotificationMethods.includes("notifications/message")) return false;
    if (this.#engine.server.capabilities.logging === undefined) return false;
    const level = session.logLevel;
    return !level || LOG_LEVELS.indexOf(level) <= LOG_LEVELS.indexOf("warning");
  }

  /** GET and DELETE without a session from a stateless client: 405 (digest §6). */
  #statelessOnly(request: Request): Response | undefined {
    if (request.headers.has("mcp-session-id")) return undefined;
    const header = request.headers.get("mcp-protocol-version")?.trim();
    if (!header || !this.#engine.dialect(header, "stateless")) return undefined;
    return errorResponseOf(
      405,
      null,
      ErrorCode.INVALID_REQUEST,
      `Method Not Allowed: protocol ${header} serves POST only`,
      { headers: { allow: "POST" } },
    );
  }

  #acceptsBoth(request: Request): boolean {
    const accept = request.headers.get("accept");
    if (accept !== this.#lastAccept) {
      this.#lastAccept = accept;
      this.#lastAcceptsBoth = accepts(accept, "application/json") &&
        accepts(accept, "text/event-stream");
    }
    return this.#lastAcceptsBoth;
  }

  /**
   * Saves the session's record; resolves with why it could not be, after
   * ending the session when its state cannot be kept (logged either way).
   */
  #persist(entry: SessionEntry): Promise<SessionNotStored | undefined> {
    return this.#sessions.persist(entry).then(() => undefined, async (error) => {
      const refusal = notStored(error, entry.session.id!);
      logger.error("store.failed", `session store failed saving ${entry.session.id}`, {
        error,
        status: refusal.status,
        ended: refusal.ends,
      });
      if (refusal.ends) await this.#sessions.unstorable(entry);
      return refusal;
    });
  }
}

/** `Last-Event-ID` as a non-negative integer; anything else is ignored. */
function lastEventIdOf(request: Request): number | undefined {
  const raw = request.headers.get("last-event-id")?.trim();
  if (!raw || !/^\d{1,15}$/.test(raw)) return undefined;
  return Number(raw);
}
