/**
 * Encoding outbound messages so that a value JSON cannot encode never breaks
 * a transport: a response becomes a `-32603` error for its id, anything else
 * is dropped, and each is reported (to the operator's log with {@link reportUnencodable}).
 *
 * @module
 */

import { ErrorCode } from "./errors.ts";
import { errorResponse, type JsonRpcMessage } from "./json_rpc.ts";
import { logger } from "./logger.ts";

/**
 * An outbound message that `JSON.stringify` refused (a `BigInt`, a circular
 * object, a throwing `toJSON`), as {@link encodeOutbound} reports it.
 *
 * @example
 * ```ts
 * import type { UnencodableMessage } from "@anubis/core/engine";
 * const problem: UnencodableMessage = {
 *   message: { jsonrpc: "2.0", method: "notifications/message" },
 *   reason: "Do not know how to serialize a BigInt",
 *   replaced: false,
 * };
 * ```
 */
export interface UnencodableMessage {
  /** The message (or batch entry) that could not be encoded. */
  message: JsonRpcMessage;
  /** Why, in one line. */
  reason: string;
  /**
   * `true` for a response, which went out as a `-32603` error for its id;
   * `false` for a request or notification, which was dropped.
   */
  replaced: boolean;
}

/**
 * Encodes an outbound message (or batch) as compact JSON text, like
 * `encodeMessage`, but never throws. A response that cannot be encoded
 * becomes a `-32603` error response for the same id, so the client is not
 * left waiting; a request or notification that cannot be encoded is dropped
 * (`undefined`). Each one is reported to `onUnencodable`. A batch keeps the
 * entries that encode (and the replacements). Encoding that succeeds costs
 * exactly one `JSON.stringify`.
 *
 * @param message The message or batch.
 * @param onUnencodable Told about each message replaced or dropped.
 * @returns The JSON text without a trailing newline, or `undefined` when nothing is left to send.
 *
 * @example
 * ```ts
 * import { encodeOutbound } from "@anubis/core/engine";
 * import assert from "node:assert/strict";
 * const text = encodeOutbound(
 *   { jsonrpc: "2.0", id: 1, result: { n: 1n } },
 *   (problem) => console.error(problem.reason), // Do not know how to serialize a BigInt
 * );
 * assert.equal(JSON.parse(text!).error.code, -32603);
 * assert.equal(encodeOutbound({ jsonrpc: "2.0", method: "x", params: { n: 1n } }), undefined);
 * ```
 */
export function encodeOutbound(
  message: JsonRpcMessage | readonly JsonRpcMessage[],
  onUnencodable?: (problem: UnencodableMessage) => void,
): string | undefined {
  try {
    return JSON.stringify(message);
  } catch (error) {
    return encodeFallback(message, error, onUnencodable);
  }
}

/**
 * Reports an outbound message that could not be encoded to the operator's
 * log (`logger`, stderr), once, as an `error` event `message.unencodable`:
 * what it was (its `method`, or the `id` it answers), the `reason`, and
 * whether it was `replaced` by a `-32603` error or dropped; never the
 * message's content. The `onUnencodable` the transports pass to
 * {@link encodeOutbound}.
 *
 * @param problem The message, the reason and whether it was replaced.
 *
 * @example
 * ```ts
 * import { encodeOutbound, reportUnencodable } from "@anubis/core/engine";
 * import assert from "node:assert/strict";
 * import { configureLogger } from "@anubis/core";
 * const lines: string[] = [];
 * configureLogger({ format: "json", write: (line) => lines.push(line) });
 * const text = encodeOutbound({ jsonrpc: "2.0", id: 7, result: { n: 1n } }, reportUnencodable);
 * configureLogger({});
 * assert.equal(JSON.parse(text!).id, 7);
 * const record = JSON.parse(lines[0]);
 * assert.equal(record.event, "message.unencodable");
 * assert.equal(record.id, "7");
 * assert.equal(record.replaced, true);
 * ```
 */
export function reportUnencodable({ message, reason, replaced }: UnencodableMessage): void {
  const method = "method" in message ? message.method : undefined;
  const id = "id" in message && message.id !== undefined && message.id !== null
    ? String(message.id)
    : undefined;
  const what = method ?? `the response to ${id}`;
  logger.error(
    "message.unencodable",
    replaced
      ? `${what} could not be encoded as JSON (${reason}); sent -32603 instead`
      : `dropped ${what}: it could not be encoded as JSON (${reason})`,
    { method, id, reason, replaced },
  );
}

/**
 * The error for a server-to-client request that {@link encodeOutbound}
 * dropped, so its sender (`elicit()`, `sample()`...) fails at once instead of
 * waiting for an answer until its timeout; `undefined` for anything else
 * (a notification, a response, a batch), which nobody waits on.
 *
 * @param message The message that could not be encoded.
 * @returns The error to reject the write with, or `undefined`.
 *
 * @example
 * ```ts
 * import { unsentRequestError } from "@anubis/core/engine";
 * import assert from "node:assert/strict";
 * assert.equal(unsentRequestError({ jsonrpc: "2.0", method: "notifications/progress" }), undefined);
 * const error = unsentRequestError({ jsonrpc: "2.0", id: "a-1", method: "roots/list" });
 * assert.equal(error?.message, "roots/list could not be encoded as JSON, so it was not sent");
 * ```
 */
export function unsentRequestError(
  message: JsonRpcMessage | readonly JsonRpcMessage[],
): TypeError | undefined {
  if (Array.isArray(message)) return undefined;
  const single = message as JsonRpcMessage;
  if (!("method" in single && "id" in single)) return undefined;
  return new TypeError(`${single.method} could not be encoded as JSON, so it was not sent`);
}

function encodeFallback(
  message: JsonRpcMessage | readonly JsonRpcMessage[],
  error: unknown,
  onUnencodable: ((problem: UnencodableMessage) => void) | undefined,
): string | undefined {
  if (Array.isArray(message)) {
    const parts: string[] = [];
    for (const entry of message as readonly JsonRpcMessage[]) {
      const text = encodeOutbound(entry, onUnencodable);
      if (text !== undefined) parts.push(text);
    }
    return parts.length > 0 ? `[${parts.join(",")}]` : undefined;
  }
  const single = message as JsonRpcMessage;
  const reason = reasonOf(error);
  const isResponse = typeof single === "object" && single !== null && !("method" in single) &&
    "id" in single;
  onUnencodable?.({ message: single, reason, replaced: isResponse });
  if (!isResponse) return undefined;
  // A non-finite number encodes as `null` anyway.
  const id = typeof single.id === "string" || typeof single.id === "number" ? single.id : null;
  return JSON.stringify(
    errorResponse(
      id,
      ErrorCode.INTERNAL_ERROR,
      `Internal error: the response could not be encoded as JSON (${reason})`,
    ),
  );
}

function reasonOf(error: unknown): string {
  try {
    return (error instanceof Error ? error.message : String(error)).split("\n")[0];
  } catch {
    return "unknown error";
  }
}
