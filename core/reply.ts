/**
 * How the engine turns results and thrown errors into a {@link Reply}: the
 * error response and its HTTP status, and the context results are encoded
 * with.
 *
 * @module
 */

import { CACHEABLE_METHODS, type EncodeContext } from "./dialect.ts";
import { ErrorCode, McpError } from "./errors.ts";
import type { Frame } from "./frame.ts";
import { errorResponse, type JsonRpcRequest, type JsonRpcResponse } from "./json_rpc.ts";
import type { McpServer } from "./server.ts";
import type { Era } from "./types.ts";

/**
 * The engine's answer to a request: the response and the HTTP status a
 * transport should use (stateless-era envelope errors are 400, unknown
 * methods 404; everything else 200).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { Reply } from "@anubis/core/engine";
 * const reply: Reply = { message: { jsonrpc: "2.0", id: 1, result: {} }, status: 200 };
 * assert.equal(reply.status, 200);
 * ```
 */
export interface Reply {
  /** The JSON-RPC response. */
  message: JsonRpcResponse;
  /** The suggested HTTP status. */
  status: number;
}

/**
 * Carries a request that gets no response out to the engine: a handler's
 * `NO_REPLY`, or a stateless request cancelled before it asked for input.
 * A middleware that reports failures tells it apart from an error.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { NoReply } from "@anubis/core/engine";
 * const thrown: unknown = new NoReply();
 * assert.equal(thrown instanceof NoReply, true);
 * assert.equal(thrown instanceof Error, true);
 * ```
 */
export class NoReply extends Error {}

const STATUS_400 = new Set<number>([
  ErrorCode.HEADER_MISMATCH,
  ErrorCode.MISSING_REQUIRED_CLIENT_CAPABILITY,
  ErrorCode.UNSUPPORTED_PROTOCOL_VERSION,
]);

/** Marks an error found in the request envelope, answered with HTTP 400. */
export class EnvelopeError extends McpError {}

/**
 * A request for something that exists but needs OAuth scopes the caller's
 * token lacks: answered with HTTP 403 in both eras, which the HTTP transport
 * gives the `insufficient_scope` challenge naming `data.scopes` (step-up).
 * Over stdio it stays a JSON-RPC error.
 */
export class InsufficientScopeError extends McpError {
  constructor(what: string, name: string, scopes: readonly string[]) {
    super(
      ErrorCode.INVALID_REQUEST,
      `Forbidden: ${what} ${name} needs scope ${scopes.join(" ")}`,
      { name, scopes },
    );
  }
}

/** Whether the frame's caller (`frame.context.authInfo.scopes`) holds every one of the scopes. */
export function holdsScopes(frame: Frame, scopes: readonly string[]): boolean {
  const granted = (frame.context.authInfo as { scopes?: unknown } | undefined)?.scopes;
  return Array.isArray(granted) && scopes.every((scope) => granted.includes(scope));
}

/**
 * The scoped items of a listing the caller may see (all of them when none
 * needs a scope: the same array, nothing copied).
 */
export function visibleByScope<T extends { requiredScopes?: readonly string[] }>(
  items: T[],
  frame: Frame,
): T[] {
  if (!items.some((item) => (item.requiredScopes?.length ?? 0) > 0)) return items;
  return items.filter((item) => !item.requiredScopes || holdsScopes(frame, item.requiredScopes));
}

/** The error reply to a request; stateless-era errors get their HTTP status. */
export function errorReply(request: JsonRpcRequest, thrown: unknown, era: Era = "legacy"): Reply {
  const error = McpError.from(thrown);
  let status = 200;
  if (thrown instanceof InsufficientScopeError) status = 403;
  else if (era === "stateless") {
    if (thrown instanceof EnvelopeError || STATUS_400.has(error.code)) status = 400;
    else if (error.code === ErrorCode.METHOD_NOT_FOUND) status = 404;
    else if (error.code === ErrorCode.TOO_MANY_TASKS) status = 429;
  }
  return { message: errorResponse(request.id, error.code, error.message, error.data), status };
}

/** What a dialect's `encodeResult` needs: server info, the cache hint, and whether this is a retry. */
export function encodeContext(
  server: McpServer,
  method?: string,
  frame?: Frame,
  retry = false,
): EncodeContext {
  const hints = server.definition.cacheHints;
  const cacheHint = method && frame && hints && CACHEABLE_METHODS.has(method)
    ? hints(method, frame)
    : undefined;
  return { serverInfo: server.info, cacheHint, retry };
}
