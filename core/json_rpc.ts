/**
 * JSON-RPC 2.0 messages: types, a decoder that classifies any input, and an
 * encoder.
 *
 * @module
 */

import { ErrorCode, type JsonRpcErrorObject } from "./errors.ts";

/**
 * A JSON-RPC request or response id.
 *
 * @example
 * ```ts
 * import type { RequestId } from "@anubis/core";
 * const id: RequestId = "req-1";
 * ```
 */
export type RequestId = string | number;

/**
 * A JSON-RPC request: a method call that expects a response.
 *
 * @example
 * ```ts
 * import type { JsonRpcRequest } from "@anubis/core";
 * const request: JsonRpcRequest = { jsonrpc: "2.0", id: 1, method: "tools/list" };
 * ```
 */
export interface JsonRpcRequest {
  /** Always `"2.0"`. */
  jsonrpc: "2.0";
  /** The request id, echoed by the response. */
  id: RequestId;
  /** The method name. */
  method: string;
  /** The method parameters. */
  params?: Record<string, unknown>;
}

/**
 * A JSON-RPC notification: a method call without an id, never answered.
 *
 * @example
 * ```ts
 * import type { JsonRpcNotification } from "@anubis/core";
 * const note: JsonRpcNotification = { jsonrpc: "2.0", method: "notifications/initialized" };
 * ```
 */
export interface JsonRpcNotification {
  /** Always `"2.0"`. */
  jsonrpc: "2.0";
  /** The method name. */
  method: string;
  /** The method parameters. */
  params?: Record<string, unknown>;
}

/**
 * A successful JSON-RPC response.
 *
 * @example
 * ```ts
 * import type { JsonRpcResultResponse } from "@anubis/core/engine";
 * const response: JsonRpcResultResponse = { jsonrpc: "2.0", id: 1, result: {} };
 * ```
 */
export interface JsonRpcResultResponse {
  /** Always `"2.0"`. */
  jsonrpc: "2.0";
  /** The id of the request this answers. */
  id: RequestId;
  /** The result. */
  result: Record<string, unknown>;
}

/**
 * A JSON-RPC error response. The id is `null` when the request id could not
 * be read.
 *
 * @example
 * ```ts
 * import type { JsonRpcErrorResponse } from "@anubis/core/engine";
 * const response: JsonRpcErrorResponse = {
 *   jsonrpc: "2.0",
 *   id: null,
 *   error: { code: -32700, message: "Parse error" },
 * };
 * ```
 */
export interface JsonRpcErrorResponse {
  /** Always `"2.0"`. */
  jsonrpc: "2.0";
  /** The id of the request this answers, or `null`. */
  id: RequestId | null;
  /** The error. */
  error: JsonRpcErrorObject;
}

/**
 * Either kind of JSON-RPC response.
 *
 * @example
 * ```ts
 * import type { JsonRpcResponse } from "@anubis/core/engine";
 * const response: JsonRpcResponse = { jsonrpc: "2.0", id: 7, result: {} };
 * ```
 */
export type JsonRpcResponse = JsonRpcResultResponse | JsonRpcErrorResponse;

/**
 * Any single JSON-RPC message.
 *
 * @example
 * ```ts
 * import type { JsonRpcMessage } from "@anubis/core/engine";
 * const message: JsonRpcMessage = { jsonrpc: "2.0", method: "notifications/initialized" };
 * ```
 */
export type JsonRpcMessage = JsonRpcRequest | JsonRpcNotification | JsonRpcResponse;

/**
 * What {@link decodeMessage} found: one classified message, a batch of
 * classified entries, or input that is not JSON-RPC at all (with the error
 * response to send back).
 *
 * @example
 * ```ts
 * import { decodeMessage } from "@anubis/core/engine";
 * import assert from "node:assert/strict";
 * const decoded = decodeMessage('{"jsonrpc":"2.0","id":1,"method":"ping"}');
 * assert(decoded.kind === "request");
 * assert.equal(decoded.message.method, "ping");
 * ```
 */
export type Decoded =
  | { kind: "request"; message: JsonRpcRequest }
  | { kind: "notification"; message: JsonRpcNotification }
  | { kind: "response"; message: JsonRpcResultResponse }
  | { kind: "error_response"; message: JsonRpcErrorResponse }
  | { kind: "batch"; entries: Decoded[] }
  | { kind: "invalid"; error: JsonRpcErrorResponse };

/**
 * Builds a JSON-RPC error response.
 *
 * @param id The request id, or `null` when it could not be read.
 * @param code The error code.
 * @param message The error message.
 * @param data Optional error data.
 * @returns The error response.
 *
 * @example
 * ```ts
 * import { errorResponse } from "@anubis/core/engine";
 * import assert from "node:assert/strict";
 * assert.equal(errorResponse(1, -32601, "Method not found: foo").error.code, -32601);
 * ```
 */
export function errorResponse(
  id: RequestId | null,
  code: number,
  message: string,
  data?: unknown,
): JsonRpcErrorResponse {
  const error: JsonRpcErrorObject = data === undefined
    ? { code, message }
    : { code, message, data };
  return { jsonrpc: "2.0", id, error };
}

/**
 * Builds a successful JSON-RPC response.
 *
 * @param id The request id.
 * @param result The result object.
 * @returns The response.
 *
 * @example
 * ```ts
 * import { resultResponse } from "./json_rpc.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(resultResponse(1, {}), { jsonrpc: "2.0", id: 1, result: {} });
 * ```
 */
export function resultResponse(
  id: RequestId,
  result: Record<string, unknown>,
): JsonRpcResultResponse {
  return { jsonrpc: "2.0", id, result };
}

function isId(value: unknown): value is RequestId {
  return typeof value === "string" || (typeof value === "number" && Number.isFinite(value));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Reads the id of a malformed message when it is a valid id, so errors can echo it. */
function readableId(value: Record<string, unknown>): RequestId | null {
  return isId(value.id) ? value.id : null;
}

/**
 * Classifies an already parsed JSON value as a JSON-RPC message.
 *
 * @param value The parsed value.
 * @returns The classification; never throws.
 *
 * @example
 * ```ts
 * import { classifyMessage } from "@anubis/core/engine";
 * import assert from "node:assert/strict";
 * assert.equal(
 *   classifyMessage({ jsonrpc: "2.0", method: "notifications/initialized" }).kind,
 *   "notification",
 * );
 * ```
 */
export function classifyMessage(value: unknown): Decoded {
  if (Array.isArray(value)) {
    if (value.length === 0) {
      return {
        kind: "invalid",
        error: errorResponse(null, ErrorCode.INVALID_REQUEST, "Empty batch"),
      };
    }
    return { kind: "batch", entries: value.map(classifySingle) };
  }
  return classifySingle(value);
}

function invalid(id: RequestId | null, message: string): Decoded {
  return { kind: "invalid", error: errorResponse(id, ErrorCode.INVALID_REQUEST, message) };
}

function classifySingle(value: unknown): Decoded {
  if (!isObject(value)) return invalid(null, "Invalid Request: not a JSON object");
  if (value.jsonrpc !== "2.0") {
    return invalid(readableId(value), 'Invalid Request: jsonrpc must be "2.0"');
  }
  if ("method" in value) {
    if (typeof value.method !== "string") {
      return invalid(readableId(value), "Invalid Request: method must be a string");
    }
    if (value.params !== undefined && !isObject(value.params)) {
      return invalid(readableId(value), "Invalid Request: params must be an object");
    }
    if (!("id" in value)) {
      return { kind: "notification", message: value as unknown as JsonRpcNotification };
    }
    if (!isId(value.id)) return invalid(null, "Invalid Request: id must be a string or a number");
    return { kind: "request", message: value as unknown as JsonRpcRequest };
  }
  if ("result" in value) {
    if (!isId(value.id)) {
      return invalid(null, "Invalid Request: response id must be a string or a number");
    }
    if (!isObject(value.result)) {
      return invalid(value.id, "Invalid Request: result must be an object");
    }
    return { kind: "response", message: value as unknown as JsonRpcResultResponse };
  }
  if ("error" in value) {
    const error = value.error;
    if (!isObject(error) || typeof error.code !== "number" || typeof error.message !== "string") {
      return invalid(readableId(value), "Invalid Request: malformed error object");
    }
    if (value.id !== null && !isId(value.id)) {
      return invalid(null, "Invalid Request: response id must be a string, a number or null");
    }
    return { kind: "error_response", message: value as unknown as JsonRpcErrorResponse };
  }
  return invalid(
    readableId(value),
    "Invalid Request: neither a request, a notification nor a response",
  );
}

/**
 * Parses and classifies one JSON-RPC payload. Text that is not JSON gives a
 * `-32700` parse error with `id: null`; JSON that is not JSON-RPC gives
 * `-32600`, echoing the id when one could be read.
 *
 * @param text The payload, as text or UTF-8 bytes.
 * @returns The classification; never throws.
 *
 * @example
 * ```ts
 * import { decodeMessage } from "@anubis/core/engine";
 * import assert from "node:assert/strict";
 * const decoded = decodeMessage("{not json");
 * assert(decoded.kind === "invalid");
 * assert.equal(decoded.error.error.code, -32700);
 * ```
 */
export function decodeMessage(text: string | Uint8Array): Decoded {
  let value: unknown;
  try {
    value = JSON.parse(typeof text === "string" ? text : utf8.decode(text));
  } catch {
    return notJson();
  }
  return classifyMessage(value);
}

/**
 * The classification of a payload that is not JSON: `-32700` with `id: null`.
 * For a transport that parses the payload itself (`Request.json()`) and
 * classifies the value with {@link classifyMessage}.
 *
 * @returns The `invalid` classification carrying the parse error.
 *
 * @example
 * ```ts
 * import { notJson } from "@anubis/core/engine";
 * import assert from "node:assert/strict";
 * const decoded = notJson();
 * assert(decoded.kind === "invalid");
 * assert.equal(decoded.error.error.code, -32700);
 * ```
 */
export function notJson(): Decoded {
  return { kind: "invalid", error: errorResponse(null, ErrorCode.PARSE_ERROR, "Parse error") };
}

// A byte order mark is kept, so a message that starts with one is not JSON
// text (-32700), on every transport alike (RFC 8259 §8.1: senders must not add one).
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * Encodes a message (or a batch of messages) as compact JSON text.
 *
 * @param message The message or batch.
 * @returns The JSON text, without a trailing newline.
 *
 * @example
 * ```ts
 * import { encodeMessage } from "./json_rpc.ts";
 * import assert from "node:assert/strict";
 * assert.equal(encodeMessage({ jsonrpc: "2.0", id: 1, result: {} }), '{"jsonrpc":"2.0","id":1,"result":{}}');
 * ```
 */
export function encodeMessage(message: JsonRpcMessage | readonly JsonRpcMessage[]): string {
  return JSON.stringify(message);
}

/**
 * Tells whether a message is a request (has a method and an id).
 *
 * @param message Any message.
 * @returns `true` for a request.
 *
 * @example
 * ```ts
 * import { isRequest } from "@anubis/core/engine";
 * import assert from "node:assert/strict";
 * assert.equal(isRequest({ jsonrpc: "2.0", id: 1, method: "ping" }), true);
 * ```
 */
export function isRequest(message: JsonRpcMessage): message is JsonRpcRequest {
  return "method" in message && "id" in message;
}

/**
 * Tells whether a message is a notification (has a method and no id).
 *
 * @param message Any message.
 * @returns `true` for a notification.
 *
 * @example
 * ```ts
 * import { isNotification } from "@anubis/core/engine";
 * import assert from "node:assert/strict";
 * assert.equal(isNotification({ jsonrpc: "2.0", method: "notifications/initialized" }), true);
 * ```
 */
export function isNotification(message: JsonRpcMessage): message is JsonRpcNotification {
  return "method" in message && !("id" in message);
}
