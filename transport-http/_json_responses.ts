/**
 * Building the plain responses of the transport: JSON bodies, JSON-RPC
 * errors with an HTTP status, and empty acknowledgements.
 *
 * @module
 */

import type { RequestId } from "@anubis/core";
import { errorResponse } from "@anubis/core/engine";

const JSON_HEADERS: Readonly<Record<string, string>> = { "content-type": "application/json" };
/**
 * The init of a 200 JSON response and of a 202, shared: `Response` only reads
 * its init, and nearly every answer is one of these two.
 */
const JSON_OK_INIT: ResponseInit = Object.freeze({ status: 200, headers: JSON_HEADERS });
const ACCEPTED_INIT: ResponseInit = Object.freeze({ status: 202 });

/**
 * A JSON response.
 *
 * @param body Any JSON value (a message, a batch).
 * @param status The HTTP status.
 * @param headers Extra headers.
 * @returns The response.
 *
 * @example
 * ```ts
 * import { jsonResponse } from "./_json_responses.ts";
 * import assert from "node:assert/strict";
 * const response = jsonResponse({ jsonrpc: "2.0", id: 1, result: {} }, 200);
 * assert.equal(response.headers.get("content-type"), "application/json");
 * await response.body?.cancel();
 * ```
 */
export function jsonResponse(
  body: unknown,
  status: number,
  headers?: Record<string, string>,
): Response {
  return jsonTextResponse(JSON.stringify(body), status, headers);
}

/**
 * A JSON response from text already encoded.
 *
 * @param text The JSON text.
 * @param status The HTTP status.
 * @param headers Extra headers.
 * @returns The response.
 *
 * @example
 * ```ts
 * import { jsonTextResponse } from "./_json_responses.ts";
 * import assert from "node:assert/strict";
 * const response = jsonTextResponse('{"jsonrpc":"2.0","id":1,"result":{}}', 200);
 * assert.equal(response.headers.get("content-type"), "application/json");
 * assert.equal((await response.json()).id, 1);
 * ```
 */
export function jsonTextResponse(
  text: string,
  status: number,
  headers?: Record<string, string>,
): Response {
  const response = new Response(
    text,
    status === 200 ? JSON_OK_INIT : { status, headers: JSON_HEADERS },
  );
  // Set afterwards, not in the init: Deno turns a response with headers
  // besides Content-Type into a native object with a finalizer as it is
  // built, which costs more than sending its header list when it is served.
  if (headers) {
    for (const name in headers) response.headers.set(name, headers[name]);
  }
  return response;
}

/**
 * A JSON-RPC error response with an HTTP status.
 *
 * @param status The HTTP status.
 * @param id The request id when it could be read, else `null`.
 * @param code The JSON-RPC error code.
 * @param message The error message (never a stack trace).
 * @param extra The error's `data` and extra headers, if any.
 * @returns The response.
 *
 * @example
 * ```ts
 * import { errorResponseOf } from "./_json_responses.ts";
 * import assert from "node:assert/strict";
 * const response = errorResponseOf(404, 7, -32001, "Session not found");
 * assert.equal(response.status, 404);
 * assert.equal((await response.json()).id, 7);
 * const limited = errorResponseOf(429, null, -32000, "Too Many Requests", {
 *   data: { retryAfterMs: 2000 },
 *   headers: { "retry-after": "2" },
 * });
 * assert.equal(limited.headers.get("retry-after"), "2");
 * assert.equal((await limited.json()).error.data.retryAfterMs, 2000);
 * ```
 */
export function errorResponseOf(
  status: number,
  id: RequestId | null,
  code: number,
  message: string,
  extra?: { data?: unknown; headers?: Record<string, string> },
): Response {
  return jsonResponse(errorResponse(id, code, message, extra?.data), status, extra?.headers);
}

/**
 * The empty `202 Accepted` of a notification or response.
 *
 * @returns The response.
 *
 * @example
 * ```ts
 * import { accepted } from "./_json_responses.ts";
 * import assert from "node:assert/strict";
 * assert.equal(accepted().status, 202);
 * ```
 */
export function accepted(): Response {
  return new Response(null, ACCEPTED_INIT);
}
