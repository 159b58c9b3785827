/**
 * JSON-RPC and MCP error codes, and the {@link McpError} class that handlers
 * throw to answer a request with a JSON-RPC error.
 *
 * @module
 */

/**
 * The error codes this SDK emits. The 2026-07-28 codes (`-32020` to `-32022`)
 * are only sent to stateless-era requests; `RESOURCE_NOT_FOUND` only to legacy
 * ones.
 *
 * @example
 * ```ts
 * import { ErrorCode } from "@anubis/core";
 * import assert from "node:assert/strict";
 * assert.equal(ErrorCode.INVALID_PARAMS, -32602);
 * ```
 */
export const ErrorCode = {
  /** Invalid JSON was received. Always answered with `id: null`. */
  PARSE_ERROR: -32700,
  /** The JSON sent is not a valid JSON-RPC request. */
  INVALID_REQUEST: -32600,
  /** The method does not exist or is not available in this protocol version. */
  METHOD_NOT_FOUND: -32601,
  /** Invalid method parameters. */
  INVALID_PARAMS: -32602,
  /** Internal JSON-RPC error. */
  INTERNAL_ERROR: -32603,
  /** A resource was not found (protocol versions before 2026-07-28). */
  RESOURCE_NOT_FOUND: -32002,
  /** An HTTP header disagrees with the body, or a required header is missing (2026-07-28). */
  HEADER_MISMATCH: -32020,
  /** The request needs a client capability it did not declare (2026-07-28). */
  MISSING_REQUIRED_CLIENT_CAPABILITY: -32021,
  /** The request names a protocol version the server does not support (2026-07-28). */
  UNSUPPORTED_PROTOCOL_VERSION: -32022,
  /** Too many tasks: the caller's share or the task store is full (HTTP 429 when stateless). */
  TOO_MANY_TASKS: -32050,
  /** The request needs the user to finish URL elicitations first; `data.elicitations` lists them (2025-11-25 only). */
  URL_ELICITATION_REQUIRED: -32042,
} as const;

/**
 * The numeric type of one of the codes in {@link ErrorCode}, or any other
 * integer code an application chooses.
 *
 * @example
 * ```ts
 * import type { ErrorCodeValue } from "@anubis/core";
 * const code: ErrorCodeValue = -32602;
 * ```
 */
export type ErrorCodeValue = (typeof ErrorCode)[keyof typeof ErrorCode] | number;

/**
 * The JSON-RPC error object carried by an error response.
 *
 * @example
 * ```ts
 * import type { JsonRpcErrorObject } from "@anubis/core";
 * const error: JsonRpcErrorObject = { code: -32601, message: "Method not found" };
 * ```
 */
export interface JsonRpcErrorObject {
  /** The error code. */
  code: number;
  /** A short description of the error. */
  message: string;
  /** Additional information about the error. */
  data?: unknown;
}

/**
 * An error a handler throws to answer with a JSON-RPC error. The code, message
 * and data reach the client unchanged.
 *
 * @example
 * ```ts
 * import { ErrorCode, McpError } from "@anubis/core";
 * import assert from "node:assert/strict";
 * const error = new McpError(ErrorCode.INVALID_PARAMS, "Unknown city", { city: "Atlantis" });
 * assert.deepEqual(error.toJSON(), { code: -32602, message: "Unknown city", data: { city: "Atlantis" } });
 * ```
 */
export class McpError extends Error {
  /**
   * The JSON-RPC error code.
   *
   * @example
   * ```ts
   * import { ErrorCode, McpError } from "@anubis/core";
   * import assert from "node:assert/strict";
   * const error = new McpError(ErrorCode.METHOD_NOT_FOUND, "No such method");
   * assert.equal(error.code === ErrorCode.METHOD_NOT_FOUND, true);
   * assert.equal(error.code, -32601);
   * ```
   */
  readonly code: number;
  /**
   * Additional information for the client, omitted from the wire when undefined.
   *
   * @example
   * ```ts
   * import { ErrorCode, McpError } from "@anubis/core";
   * import assert from "node:assert/strict";
   * const error = new McpError(ErrorCode.INVALID_PARAMS, "Unknown city", { city: "Atlantis" });
   * assert.deepEqual(error.data, { city: "Atlantis" });
   * assert.equal(new McpError(ErrorCode.INTERNAL_ERROR, "Oops").data, undefined);
   * ```
   */
  readonly data?: unknown;

  /**
   * Creates an error with a code, a message and optional data.
   *
   * @param code The JSON-RPC error code.
   * @param message A short description of the error.
   * @param data Additional information for the client.
   */
  constructor(code: number, message: string, data?: unknown) {
    super(message);
    this.name = "McpError";
    this.code = code;
    if (data !== undefined) this.data = data;
  }

  /**
   * The JSON-RPC error object for this error.
   *
   * @returns The `{ code, message, data? }` object.
   *
   * @example
   * ```ts
   * import { ErrorCode, McpError } from "@anubis/core";
   * import assert from "node:assert/strict";
   * const error = new McpError(ErrorCode.INVALID_REQUEST, "Server not initialized");
   * assert.deepEqual(error.toJSON(), { code: -32600, message: "Server not initialized" });
   * assert.equal(JSON.stringify(error), '{"code":-32600,"message":"Server not initialized"}');
   * ```
   */
  toJSON(): JsonRpcErrorObject {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }

  /**
   * Turns anything thrown into an `McpError`: an `McpError` is kept, anything
   * else becomes an internal error whose message is the thrown value as a
   * string (never a stack trace).
   *
   * @param thrown The caught value.
   * @returns An `McpError`.
   *
   * @example
   * ```ts
   * import { McpError } from "@anubis/core";
   * import assert from "node:assert/strict";
   * assert.equal(McpError.from(new Error("boom")).code, -32603);
   * ```
   */
  static from(thrown: unknown): McpError {
    if (thrown instanceof McpError) return thrown;
    const message = thrown instanceof Error ? thrown.message : String(thrown);
    return new McpError(ErrorCode.INTERNAL_ERROR, message || "Internal error");
  }
}

/**
 * One URL-mode elicitation a `-32042` error asks the client to run (see
 * {@link urlElicitationRequired}).
 *
 * @example
 * ```ts
 * import type { UrlElicitation } from "@anubis/core";
 * import assert from "node:assert/strict";
 * const login: UrlElicitation = { elicitationId: "e1", url: "https://example.com/login", message: "Sign in" };
 * assert.equal(login.elicitationId, "e1");
 * ```
 */
export interface UrlElicitation {
  /** The id `notifications/elicitation/complete` names when the step is done (`frame.completeElicitation`). */
  elicitationId: string;
  /** The URL the user opens. */
  url: string;
  /** Why the user is asked. */
  message: string;
}

/**
 * The `-32042` error (URL elicitation required, 2025-11-25) a handler throws
 * when the request can only succeed once the user finished out-of-band steps
 * (a sign-in, a payment) at the given URLs. The client opens them and retries
 * the request; tell it each step is done with `frame.completeElicitation(id)`.
 *
 * @param elicitations The steps, each with its own id.
 * @param message The error's message.
 * @returns An {@link McpError} to throw, with `data.elicitations` in the
 *   shape of `elicitation/create`'s URL-mode params.
 *
 * @example
 * ```ts
 * import { ErrorCode, urlElicitationRequired } from "@anubis/core";
 * import assert from "node:assert/strict";
 * const error = urlElicitationRequired([
 *   { elicitationId: "login-1", url: "https://example.com/login", message: "Sign in to continue" },
 * ]);
 * assert.equal(error.code, ErrorCode.URL_ELICITATION_REQUIRED);
 * assert.deepEqual(error.data, {
 *   elicitations: [{ mode: "url", elicitationId: "login-1", url: "https://example.com/login", message: "Sign in to continue" }],
 * });
 * ```
 */
export function urlElicitationRequired(
  elicitations: readonly UrlElicitation[],
  message = "URL elicitation required",
): McpError {
  return new McpError(ErrorCode.URL_ELICITATION_REQUIRED, message, {
    elicitations: elicitations.map(({ elicitationId, url, message }) => ({
      mode: "url",
      elicitationId,
      url,
      message,
    })),
  });
}
