/**
 * Protocol middleware: functions the engine runs around every request and
 * notification it serves, in both eras and over every transport, with onion
 * semantics (the first middleware of the list is the outermost).
 *
 * @module
 */

import type { Frame } from "./frame.ts";
import type { RequestId } from "./json_rpc.ts";
import type { Session } from "./legacy/session.ts";
import { logger } from "./logger.ts";
import type { Awaitable } from "./awaitable.ts";
import type { Era } from "./types.ts";

/**
 * The params of the methods a middleware can rewrite with their own types
 * (see {@link forMethod}); every other method's params are a plain record.
 *
 * @example
 * ```ts
 * import type { MiddlewareParams } from "@anubis/core";
 * import assert from "node:assert/strict";
 * const params: MiddlewareParams["tools/call"] = { name: "echo", arguments: { text: "hi" } };
 * assert.equal(params.arguments?.text, "hi");
 * ```
 */
export interface MiddlewareParams {
  /** A tool call: the tool's name and its arguments (validated after the middleware ran). */
  "tools/call": {
    name: string;
    arguments?: Record<string, unknown>;
    _meta?: Record<string, unknown>;
    [key: string]: unknown;
  };
  /** A prompt: its name and string arguments. */
  "prompts/get": {
    name: string;
    arguments?: Record<string, string>;
    _meta?: Record<string, unknown>;
    [key: string]: unknown;
  };
  /** A resource read: its URI. */
  "resources/read": { uri: string; _meta?: Record<string, unknown>; [key: string]: unknown };
}

/**
 * The params of method `M`: typed for the methods of {@link MiddlewareParams},
 * a plain record for any other.
 *
 * @example
 * ```ts
 * import type { ParamsOf } from "@anubis/core";
 * import assert from "node:assert/strict";
 * const read: ParamsOf<"resources/read"> = { uri: "notes://1" };
 * const other: ParamsOf<"custom/thing"> = { anything: 1 };
 * assert.equal(read.uri, "notes://1");
 * assert.equal(other.anything, 1);
 * ```
 */
export type ParamsOf<M extends string> = M extends keyof MiddlewareParams ? MiddlewareParams[M]
  : Record<string, unknown>;

/**
 * What a {@link Middleware} sees of the message being served.
 *
 * @example
 * ```ts
 * import type { MiddlewareCall } from "@anubis/core";
 * const describe = (call: MiddlewareCall): string =>
 *   `${call.id === undefined ? "notification" : "request"} ${call.method} over ${call.transport}`;
 * const call: MiddlewareCall = { method: "ping", params: {}, id: 1, era: "legacy", transport: "stdio" };
 * if (describe(call) !== "request ping over stdio") throw new Error(describe(call));
 * ```
 */
export interface MiddlewareCall<M extends string = string> {
  /** The JSON-RPC method. */
  readonly method: M;
  /**
   * The params as the client sent them (`{}` when it sent none), or as an
   * outer middleware replaced them (see {@link Next}). Read-only: to change
   * them, pass new params to `next`.
   */
  readonly params: Readonly<ParamsOf<M>>;
  /** The request id; `undefined` for a notification. */
  readonly id?: RequestId;
  /** The era of the message. */
  readonly era: Era;
  /** The transport kind (`"stdio"`, `"http"`, …). */
  readonly transport: string;
  /**
   * The frame the handler gets: present for every request but `initialize`
   * (which makes the session's first frame) and for notifications of an
   * initialized legacy session.
   */
  readonly frame?: Frame;
}

/**
 * What a middleware may pass to `next` to rewrite the call: new params,
 * which the inner middleware, the params' schema check (for `tools/call`, the
 * tool's input schema too) and the handler see instead of the client's. A
 * `_meta` the new params leave out is kept from the call's.
 *
 * @example
 * ```ts
 * import type { CallReplacement } from "@anubis/core";
 * import assert from "node:assert/strict";
 * const lowered: CallReplacement<"tools/call"> = { params: { name: "echo", arguments: { text: "hi" } } };
 * assert.equal(lowered.params.name, "echo");
 * ```
 */
export interface CallReplacement<M extends string = string> {
  /** The params to serve instead. */
  readonly params: ParamsOf<M>;
}

/**
 * The `next` a {@link Middleware} gets: runs the rest of the chain and then
 * the server, with the call as it is, or with `replacement`'s params.
 *
 * @example
 * ```ts
 * import type { Next } from "@anubis/core";
 * import assert from "node:assert/strict";
 * const next: Next<"resources/read"> = (replacement) =>
 *   Promise.resolve({ read: replacement?.params.uri ?? "unchanged" });
 * assert.deepEqual(await next({ params: { uri: "notes://2" } }), { read: "notes://2" });
 * ```
 */
export type Next<M extends string = string> = (
  replacement?: CallReplacement<M>,
) => Promise<Record<string, unknown> | undefined>;

/**
 * A protocol middleware. It gets the call and `next`, which runs the rest of
 * the chain and then the server (`next({ params })` with params rewritten,
 * see {@link CallReplacement}); `next()` resolves to the result (before it
 * is encoded for the dialect; `undefined` for a notification) or rejects
 * with the error the client would get. A middleware may return another
 * result, or short-circuit: return a result without calling `next`, or throw
 * an `McpError`. A request's middleware must return a result; a notification's
 * return value is ignored. Every round of a multi round-trip request is a
 * call of its own (an `input_required` result is a result). Envelope errors,
 * unsupported versions and requests before `initialize` are answered before
 * any middleware runs.
 *
 * @example Request logging and timing
 * ```ts
 * import { defineServer, type Middleware } from "@anubis/core";
 * const lines: string[] = [];
 * const timing: Middleware = async (call, next) => {
 *   const started = performance.now();
 *   try {
 *     return await next();
 *   } finally {
 *     lines.push(`${call.method} ${(performance.now() - started).toFixed(1)} ms`);
 *   }
 * };
 * const server = defineServer({ name: "s", version: "1.0.0", middleware: [timing] });
 * if (server.definition.middleware?.length !== 1) throw new Error("not set");
 * ```
 *
 * @example A cache for `resources/read` and a policy check
 * ```ts
 * import { ErrorCode, McpError, type Middleware } from "@anubis/core";
 * const cache = new Map<string, Record<string, unknown>>();
 * const cached: Middleware = async (call, next) => {
 *   if (call.method !== "resources/read") return await next();
 *   const uri = String(call.params.uri);
 *   const hit = cache.get(uri);
 *   if (hit) return hit;
 *   const result = await next();
 *   if (result) cache.set(uri, result);
 *   return result;
 * };
 * const policy: Middleware = (call, next) => {
 *   if (call.method === "tools/call" && call.params.name === "delete_all") {
 *     throw new McpError(ErrorCode.INVALID_PARAMS, "delete_all is not allowed here");
 *   }
 *   return next();
 * };
 * // Short-circuits: the server is never reached.
 * const refused = await Promise.resolve()
 *   .then(() => policy({ method: "tools/call", params: { name: "delete_all" }, id: 1, era: "legacy", transport: "stdio" }, () => Promise.resolve({})))
 *   .catch((error) => error);
 * if (!(refused instanceof McpError) || refused.code !== -32602) throw new Error("not refused");
 * const read = { method: "resources/read", params: { uri: "notes://1" }, id: 2, era: "stateless" as const, transport: "http" };
 * let reads = 0;
 * const server = () => Promise.resolve({ contents: [{ uri: "notes://1", text: String(++reads) }] });
 * await cached(read, server);
 * await cached(read, server);
 * if (reads !== 1) throw new Error(`read ${reads} times`);
 * ```
 */
export interface Middleware {
  (
    call: MiddlewareCall,
    next: Next,
  ): Awaitable<Record<string, unknown> | undefined>;
  /**
   * Called once when a legacy session that completed `initialize` ends (the
   * client's DELETE, expiry, the end of the stdio pipe); optional. Telemetry
   * records the session's duration here.
   */
  sessionEnded?(end: SessionEnd): void;
}

/**
 * What a {@link Middleware}'s `sessionEnded` learns of a legacy session that ended.
 *
 * @example
 * ```ts
 * import type { Middleware, SessionEnd } from "@anubis/core";
 * import assert from "node:assert/strict";
 * const ended: SessionEnd[] = [];
 * const watch: Middleware = Object.assign((_call: unknown, next: () => Promise<unknown>) => next(), {
 *   sessionEnded: (end: SessionEnd) => void ended.push(end),
 * }) as Middleware;
 * watch.sessionEnded?.({ transport: "stdio", protocolVersion: "2025-11-25", durationMs: 1200 });
 * assert.equal(ended[0].durationMs, 1200);
 * ```
 */
export interface SessionEnd {
  /** The session id, when the transport has one (HTTP). */
  readonly sessionId?: string;
  /** The transport kind (`"stdio"`, `"http"`, …). */
  readonly transport: string;
  /** The negotiated protocol version. */
  readonly protocolVersion: string;
  /** How long the session lived, in milliseconds. */
  readonly durationMs: number;
}

/** The `sessionEnded` callbacks of a middleware list (`undefined` when none has one). */
export function sessionEndWatchers(
  list: readonly Middleware[] | undefined,
): ((end: SessionEnd) => void)[] | undefined {
  const watchers = list?.flatMap((m) => m.sessionEnded ? [m.sessionEnded.bind(m)] : []);
  return watchers?.length ? watchers : undefined;
}

/**
 * A middleware for one method, with that method's params typed (see
 * {@link MiddlewareParams}); any other method passes through untouched.
 *
 * @example Rewriting a tool's arguments before its schema check and handler
 * ```ts
 * import { defineServer, forMethod } from "@anubis/core";
 * import assert from "node:assert/strict";
 * const trimmed = forMethod("tools/call", (call, next) => {
 *   const text = call.params.arguments?.text;
 *   if (typeof text !== "string") return next();
 *   return next({ params: { ...call.params, arguments: { ...call.params.arguments, text: text.trim() } } });
 * });
 * const served: unknown[] = [];
 * await trimmed(
 *   { method: "tools/call", params: { name: "echo", arguments: { text: "  hi  " } }, id: 1, era: "legacy", transport: "stdio" },
 *   (replacement) => {
 *     served.push(replacement?.params.arguments);
 *     return Promise.resolve({});
 *   },
 * );
 * assert.deepEqual(served, [{ text: "hi" }]);
 * const server = defineServer({ name: "s", version: "1.0.0", middleware: [trimmed] });
 * assert.equal(server.definition.middleware?.length, 1);
 * ```
 *
 * @param method The method the middleware serves.
 * @param middleware The middleware, run only for `method`.
 * @returns A {@link Middleware} for the server's `middleware` list.
 */
export function forMethod<M extends string>(
  method: M,
  middleware: (
    call: MiddlewareCall<M>,
    next: Next<M>,
  ) => Awaitable<Record<string, unknown> | undefined>,
): Middleware {
  return (call, next) =>
    call.method === method ? middleware(call as MiddlewareCall<M>, next as Next<M>) : next();
}

/** The composed chain: runs every middleware around `serve`, which gets the params to serve. */
export type MiddlewareChain = (
  call: MiddlewareCall,
  serve: (params: Record<string, unknown>) => Awaitable<Record<string, unknown> | undefined>,
) => Promise<Record<string, unknown> | undefined>;

/** Composes a list into one chain (`undefined` for an empty list: the engine then skips it). */
export function composeMiddleware(
  list: readonly Middleware[] | undefined,
): MiddlewareChain | undefined {
  if (!list?.length) return undefined;
  const chain = [...list];
  return (call, serve) => {
    let last = -1;
    const step = async (
      index: number,
      current: MiddlewareCall,
    ): Promise<Record<string, unknown> | undefined> => {
      if (index <= last) throw new Error("next() called more than once by a middleware");
      last = index;
      if (index === chain.length) return await serve(current.params);
      return await chain[index](
        current,
        (replacement) => step(index + 1, replacement ? rewritten(current, replacement) : current),
      );
    };
    return step(0, call);
  };
}

/** The call with `replacement`'s params (keeping the call's `_meta` when they have none). */
function rewritten(call: MiddlewareCall, replacement: CallReplacement): MiddlewareCall {
  const params = replacement.params;
  if (params === null || typeof params !== "object" || Array.isArray(params)) {
    throw new TypeError("next(): the replacement's params must be an object");
  }
  const meta = call.params._meta;
  return {
    ...call,
    params: meta !== undefined && !("_meta" in params) ? { ...params, _meta: meta } : params,
  };
}

/** Tells every watcher that an initialized session ended (a watcher's failure is logged). */
export function reportSessionEnd(watchers: ((end: SessionEnd) => void)[], session: Session): void {
  const end: SessionEnd = {
    sessionId: session.id,
    transport: session.transport,
    protocolVersion: session.dialect?.version ?? "",
    durationMs: performance.now() - session.openedAt,
  };
  for (const watch of watchers) {
    try {
      watch(end);
    } catch (error) {
      logger.error("middleware.failed", "a middleware's sessionEnded failed", { error });
    }
  }
}
