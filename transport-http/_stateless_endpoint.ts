/**
 * The stateless era (2026-07-28) on HTTP: POST only, the header ladder,
 * request-scoped SSE, `subscriptions/listen` streams, and a client
 * disconnect cancelling the request.
 *
 * @module
 */

import {
  ErrorCode,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type RequestId,
} from "@anubis/core";
import { type Engine, errorResponse, MetaKey, type Reply } from "@anubis/core/engine";
import { type HttpLimits, type StreamCounter, streamRefusal } from "./_stream_limits.ts";
import { checkStatelessHeaders } from "./_stateless_headers.ts";
import { clientOf, exchangeOf, type RequestContext } from "./request_context.ts";
import {
  type Cancelable,
  joinControls,
  type Outcome,
  respond,
  type ResponseControls,
} from "./_respond.ts";
import { accepted, errorResponseOf } from "./_json_responses.ts";

/**
 * Serves the POSTs whose `_meta` claims the stateless era, and refuses
 * unclaimed requests that name a stateless version in their header.
 *
 * @example
 * ```ts
 * import { defineServer } from "@anubis/core";
 * import { Engine } from "@anubis/core/engine";
 * import { createDefaultRegistry } from "@anubis/dialects";
 * import { StatelessEndpoint } from "./_stateless_endpoint.ts";
 * import { StreamCounter } from "./_stream_limits.ts";
 * import assert from "node:assert/strict";
 * const engine = new Engine(defineServer({ name: "s", version: "1" }), {
 *   registry: createDefaultRegistry(),
 * });
 * const endpoint = new StatelessEndpoint(engine, new StreamCounter(10), {
 *   maxStreams: 10,
 *   keepAliveMs: 0,
 *   resumable: false,
 * });
 * const request = new Request("http://localhost/mcp", {
 *   method: "POST",
 *   headers: { "mcp-protocol-version": "2026-07-28", "mcp-method": "server/discover" },
 * });
 * const response = await endpoint.post(request, {
 *   jsonrpc: "2.0",
 *   id: 1,
 *   method: "server/discover",
 *   params: {
 *     _meta: {
 *       "io.modelcontextprotocol/protocolVersion": "2026-07-28",
 *       "io.modelcontextprotocol/clientCapabilities": {},
 *     },
 *   },
 * }, "2026-07-28");
 * assert.equal(response.status, 200);
 * await response.body?.cancel();
 * engine.close();
 * ```
 */
export class StatelessEndpoint {
  readonly #engine: Engine;
  readonly #streams: StreamCounter;
  readonly #limits: HttpLimits;
  readonly #inflight = new Cancels();
  #closed = false;
  #lastHeader: string | undefined;
  #lastHeaderStateless = false;

  /**
   * Creates the endpoint.
   *
   * @param engine The engine.
   * @param streams The open-stream bound (listen streams count).
   * @param limits Keep-alive and limits.
   */
  constructor(engine: Engine, streams: StreamCounter, limits: HttpLimits) {
    this.#engine = engine;
    this.#streams = streams;
    this.#limits = limits;
  }

  /**
   * Shuts down: cancels every in-flight request, which is answered with 503
   * (listen streams end through the engine's own close, with their result).
   *
   * @example
   * ```ts
   * import { defineServer } from "@anubis/core";
   * import { Engine } from "@anubis/core/engine";
   * import { createDefaultRegistry } from "@anubis/dialects";
   * import { StatelessEndpoint } from "./_stateless_endpoint.ts";
   * import { StreamCounter } from "./_stream_limits.ts";
   * import assert from "node:assert/strict";
   * const server = defineServer({
   *   name: "s",
   *   version: "1",
   *   tools: [{
   *     name: "wait",
   *     description: "Waits until cancelled",
   *     inputSchema: { type: "object" },
   *     handler: (_args, frame) =>
   *       new Promise<string>((resolve) => {
   *         if (frame.signal.aborted) resolve("cancelled");
   *         frame.signal.addEventListener("abort", () => resolve("cancelled"));
   *       }),
   *   }],
   * });
   * const engine = new Engine(server, { registry: createDefaultRegistry() });
   * const limits = { maxStreams: 10, keepAliveMs: 0, resumable: false };
   * const endpoint = new StatelessEndpoint(engine, new StreamCounter(10), limits);
   * const url = "http://localhost/mcp";
   * const _meta = {
   *   "io.modelcontextprotocol/protocolVersion": "2026-07-28",
   *   "io.modelcontextprotocol/clientCapabilities": {},
   * };
   * const headers = {
   *   "mcp-protocol-version": "2026-07-28",
   *   "mcp-method": "tools/call",
   *   "mcp-name": "wait",
   * };
   * const request = new Request(url, { method: "POST", headers });
   * const params = { name: "wait", _meta };
   * const call = { jsonrpc: "2.0", id: 1, method: "tools/call", params } as const;
   * const pending = endpoint.post(request, call, "2026-07-28");
   * endpoint.close();
   * assert.equal((await pending).status, 503);
   * engine.close();
   * ```
   */
  close(): void {
    this.#closed = true;
    for (const work of this.#inflight.all()) work.cancel();
  }

  /**
   * Refuses a message without a stateless `_meta` claim whose
   * `MCP-Protocol-Version` header names a stateless version (digest §2.4 step
   * 3): a request gets 400 `-32602`, a notification 202.
   *
   * @param request The HTTP request.
   * @param message The unclaimed message.
   * @returns The response, or `undefined` when the message is legacy traffic.
   *
   * @example
   * ```ts
   * import { defineServer } from "@anubis/core";
   * import { Engine } from "@anubis/core/engine";
   * import { createDefaultRegistry } from "@anubis/dialects";
   * import { StatelessEndpoint } from "./_stateless_endpoint.ts";
   * import { StreamCounter } from "./_stream_limits.ts";
   * import assert from "node:assert/strict";
   * const engine = new Engine(defineServer({ name: "s", version: "1" }), {
   *   registry: createDefaultRegistry(),
   * });
   * const limits = { maxStreams: 10, keepAliveMs: 0, resumable: false };
   * const endpoint = new StatelessEndpoint(engine, new StreamCounter(10), limits);
   * const url = "http://localhost/mcp";
   * const ping = { jsonrpc: "2.0", id: 1, method: "ping" } as const; // no `_meta` claim
   * const headers = { "mcp-protocol-version": "2026-07-28" };
   * const claimsStateless = new Request(url, { method: "POST", headers });
   * assert.equal(endpoint.unclaimed(claimsStateless, ping)?.status, 400);
   * assert.equal(endpoint.unclaimed(new Request(url, { method: "POST" }), ping), undefined);
   * engine.close();
   * ```
   */
  unclaimed(request: Request, message: JsonRpcRequest | JsonRpcNotification): Response | undefined {
    const header = request.headers.get("mcp-protocol-version")?.trim();
    if (!header || !this.#namesStateless(header)) return undefined;
    if (!("id" in message)) return accepted();
    return errorResponseOf(
      400,
      message.id,
      ErrorCode.INVALID_PARAMS,
      `Invalid params: a ${header} request needs params._meta["${MetaKey.protocolVersion}"]`,
      { data: { envelope: { missing: ["_meta"] } } },
    );
  }

  /**
   * Serves a stateless message.
   *
   * @param request The HTTP request.
   * @param message The message, which claims the stateless era.
   * @param version The claimed version.
   * @param context The middleware's facts.
   * @returns The response: 400 from the ladder, 202 for a notification, else JSON or SSE.
   *
   * @example
   * ```ts
   * import { defineServer } from "@anubis/core";
   * import { Engine } from "@anubis/core/engine";
   * import { createDefaultRegistry } from "@anubis/dialects";
   * import { StatelessEndpoint } from "./_stateless_endpoint.ts";
   * import { StreamCounter } from "./_stream_limits.ts";
   * import assert from "node:assert/strict";
   * const engine = new Engine(defineServer({ name: "s", version: "1" }), {
   *   registry: createDefaultRegistry(),
   * });
   * const limits = { maxStreams: 10, keepAliveMs: 0, resumable: false };
   * const endpoint = new StatelessEndpoint(engine, new StreamCounter(10), limits);
   * const url = "http://localhost/mcp";
   * const _meta = {
   *   "io.modelcontextprotocol/protocolVersion": "2026-07-28",
   *   "io.modelcontextprotocol/clientCapabilities": {},
   * };
   * const discover = {
   *   jsonrpc: "2.0",
   *   id: 1,
   *   method: "server/discover",
   *   params: { _meta },
   * } as const;
   * const bare = new Request(url, { method: "POST" }); // no MCP-Protocol-Version, no Mcp-Method
   * assert.equal((await endpoint.post(bare, discover, "2026-07-28")).status, 400);
   * const headers = { "mcp-protocol-version": "2026-07-28", "mcp-method": "server/discover" };
   * const request = new Request(url, { method: "POST", headers });
   * const response = await endpoint.post(request, discover, "2026-07-28");
   * assert.equal(response.status, 200);
   * assert.equal(response.headers.get("content-type"), "application/json");
   * await response.body?.cancel();
   * engine.close();
   * ```
   */
  post(
    request: Request,
    message: JsonRpcRequest | JsonRpcNotification,
    version: unknown,
    context?: RequestContext,
  ): Promise<Response> {
    // Not async: the hot path hands back respond()'s promise without a
    // suspended frame of its own.
    const engine = this.#engine;
    const id = "id" in message ? message.id : null;
    // Looked up once for the header ladder and the engine, which takes the
    // era as decided here.
    const dialect = engine.dialect(version, "stateless");
    const refused = checkStatelessHeaders(message, version, request.headers, engine, dialect);
    if (refused) {
      // The `_meta` envelope is the earlier rung of the ladder.
      const error = engine.validateEnvelope(message) ?? refused;
      return Promise.resolve(
        errorResponseOf(400, id, error.code, error.message, { data: error.data }),
      );
    }
    const exchange = exchangeOf(request, context);
    // The share of the task store an anonymous caller's tasks count against.
    if (message.method === "tools/call") exchange.client = clientOf(context);
    if (!("id" in message)) return engine.handle(message, exchange, dialect).then(() => accepted());
    let release: (() => void) | undefined;
    if (message.method === "subscriptions/listen") {
      release = this.#streams.acquire(clientOf(context));
      if (!release) return Promise.resolve(streamRefusal(this.#streams, message.id));
    }
    // Not async either: the answer is the engine's reply mapped by one
    // continuation (a listen stream's release runs as it ends).
    const served = (controls: ResponseControls): Promise<Outcome> => {
      const handled = engine.handle(message, joinControls(exchange, controls), dialect);
      const outcome = (reply: Reply | undefined) => this.#outcome(reply, message.id);
      return release ? handled.finally(release).then(outcome) : handled.then(outcome);
    };
    return respond(served, {
      keepAliveMs: this.#limits.keepAliveMs,
      cancelOnDisconnect: true,
      request,
      // A listen stream ends gracefully through the engine's own close.
      inflight: release ? undefined : this.#inflight,
    });
  }

  /**
   * Whether a `MCP-Protocol-Version` value names a stateless version. Every
   * legacy POST asks with its session's version: the last value's verdict
   * is kept, since comparing it is cheaper than hashing a new string for
   * the registry.
   */
  #namesStateless(header: string): boolean {
    if (header !== this.#lastHeader) {
      this.#lastHeader = header;
      this.#lastHeaderStateless = this.#engine.dialect(header, "stateless") !== undefined;
    }
    return this.#lastHeaderStateless;
  }

  /** The answer to a reply: none for a request answered with nothing, 503 once shutting down. */
  #outcome(reply: Reply | undefined, id: RequestId): Outcome {
    if (reply) return { body: reply.message, status: reply.status };
    if (!this.#closed) return undefined;
    return {
      body: errorResponse(id, ErrorCode.INTERNAL_ERROR, "Server shutting down"),
      status: 503,
    };
  }
}

/**
 * The requests in flight: a lone request apart from the set of concurrent
 * ones (a Set's table is reallocated each time it empties and refills, on
 * every request of a serial client).
 */
class Cancels {
  #sole: Cancelable | undefined;
  #more: Set<Cancelable> | undefined;

  add(work: Cancelable): this {
    if (this.#sole === undefined && !this.#more?.has(work)) this.#sole = work;
    else if (this.#sole !== work) (this.#more ??= new Set()).add(work);
    return this;
  }

  delete(work: Cancelable): boolean {
    if (this.#sole === work) {
      this.#sole = undefined;
      return true;
    }
    return this.#more?.delete(work) ?? false;
  }

  /** A copy: cancelling removes them. */
  all(): Cancelable[] {
    const all = this.#more ? [...this.#more] : [];
    if (this.#sole) all.unshift(this.#sole);
    return all;
  }
}
