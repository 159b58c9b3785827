/**
 * What a middleware hands the handler along with a request (assigns and
 * authentication facts), and the engine `Exchange` built from both.
 *
 * @module
 */

import type { Exchange } from "@anubis/core/engine";
import { headerRecord } from "./_header_record.ts";

/**
 * Facts a middleware attached to a request, passed as the handler's second
 * argument; handlers see them as `frame.context.assigns` (merged into the
 * session's assigns in the legacy era) and `frame.auth` (an `AuthInfo`).
 *
 * @example
 * ```ts
 * import type { RequestContext } from "@anubis/transport-http";
 * const context: RequestContext = { assigns: { userId: 7 }, authInfo: { scopes: ["read"] } };
 * ```
 */
export interface RequestContext {
  /** User data for the frame. */
  assigns?: Record<string, unknown>;
  /** Authentication facts (a verified token's claims, say). */
  authInfo?: unknown;
  /**
   * Who the client is, for the per-client caps on sessions and streams (an
   * address, or a principal once authenticated). Without it the handler
   * uses the remote address `Deno.serve` passes; a handler mounted behind a
   * proxy or a router should set it (from `X-Forwarded-For`, say), or every
   * client counts as one.
   */
  client?: string;
}

/**
 * The second argument `Deno.serve` passes to a handler, accepted (and
 * ignored) so the handler can be given to `Deno.serve` directly.
 *
 * @example
 * ```ts
 * import type { ServeInfoLike } from "@anubis/transport-http";
 * const info: ServeInfoLike = { remoteAddr: { transport: "tcp", hostname: "127.0.0.1", port: 1 } };
 * ```
 */
export interface ServeInfoLike {
  /** The client's address. */
  readonly remoteAddr: unknown;
}

/**
 * The engine exchange of an HTTP request: its headers (a view, not a copy)
 * and the middleware's facts.
 *
 * @param request The request.
 * @param context The middleware's facts, if any.
 * @returns The exchange (without a session, an emitter or a signal).
 *
 * @example
 * ```ts
 * import { exchangeOf } from "./request_context.ts";
 * import assert from "node:assert/strict";
 * const request = new Request("http://localhost/mcp", { headers: { "x-user": "ada" } });
 * const exchange = exchangeOf(request, { assigns: { plan: "pro" } });
 * assert.equal(exchange.headers?.["x-user"], "ada");
 * assert.equal(exchange.assigns?.plan, "pro");
 * ```
 */
export function exchangeOf(request: Request, context?: RequestContext): Exchange {
  const exchange: Exchange = { transport: "http", headers: headerRecord(request.headers) };
  if (context?.assigns) exchange.assigns = context.assigns;
  if (context?.authInfo !== undefined) exchange.authInfo = context.authInfo;
  return exchange;
}

/**
 * Who a request's client is, for the per-client caps: the middleware's
 * `client`, else the hostname of `Deno.serve`'s remote address, else
 * `undefined` (no per-client cap applies).
 *
 * @param context The handler's second argument.
 * @returns The client's key.
 *
 * @example
 * ```ts
 * import { clientOf } from "./request_context.ts";
 * const info = { remoteAddr: { transport: "tcp", hostname: "127.0.0.2", port: 50_000 } };
 * if (clientOf(info) !== "127.0.0.2") throw new Error("the remote address");
 * if (clientOf({ client: "user:ada" }) !== "user:ada") throw new Error("the middleware's key");
 * if (clientOf(undefined) !== undefined) throw new Error("nobody");
 * ```
 */
export function clientOf(context: RequestContext | ServeInfoLike | undefined): string | undefined {
  if (context === undefined) return undefined;
  if ("client" in context && typeof context.client === "string") return context.client;
  const remote = (context as Partial<ServeInfoLike>).remoteAddr as
    | { hostname?: unknown }
    | undefined;
  return typeof remote?.hostname === "string" ? remote.hostname : undefined;
}
