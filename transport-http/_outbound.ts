/**
 * Encoding what the transport writes (JSON responses, POST and standalone
 * SSE streams, listen streams, batches) without ever throwing: one message
 * JSON cannot encode must not take the server down.
 *
 * @module
 */

import {
  encodeOutbound,
  type JsonRpcMessage,
  reportUnencodable,
  unsentRequestError,
} from "@anubis/core/engine";

/**
 * Encodes an outbound message (or batch) as JSON text with `encodeOutbound`
 * of `@anubis/core`: a response JSON cannot encode becomes a `-32603` error
 * for its id, a request or notification is dropped (`undefined`), and each
 * is reported on stderr. A message that encodes costs one `JSON.stringify`.
 *
 * @param message The message or batch.
 * @returns The JSON text, or `undefined` when nothing is left to send.
 *
 * @example
 * ```ts
 * import { encodeForHttp } from "./_outbound.ts";
 * import assert from "node:assert/strict";
 * const text = encodeForHttp({ jsonrpc: "2.0", id: 1, result: { n: 1n } as never });
 * assert.equal(JSON.parse(text!).error.code, -32603);
 * ```
 */
export function encodeForHttp(
  message: JsonRpcMessage | readonly JsonRpcMessage[],
): string | undefined {
  return encodeOutbound(message, reportUnencodable);
}

/**
 * What writing a message that could not be encoded returns: a request
 * rejects, so its sender (`elicit()`, `sample()`...) fails at once instead
 * of waiting for an answer until its timeout; anything else resolves.
 *
 * @param message The message {@link encodeForHttp} dropped.
 * @returns The promise the writer hands back.
 *
 * @example
 * ```ts
 * import { notSent } from "./_outbound.ts";
 * import assert from "node:assert/strict";
 * await notSent({ jsonrpc: "2.0", method: "notifications/progress" }); // resolves
 * const failed = await notSent({ jsonrpc: "2.0", id: "a-1", method: "roots/list" }).catch(() => true);
 * assert.equal(failed, true);
 * ```
 */
export function notSent(message: JsonRpcMessage): Promise<void> {
  const unsent = unsentRequestError(message);
  return unsent ? Promise.reject(unsent) : Promise.resolve();
}
