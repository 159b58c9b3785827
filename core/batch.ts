/**
 * The rules every transport applies to a JSON-RPC batch (JSON-RPC 2.0 §6,
 * MCP 2025-03-26 only): entries that are no message get their errors in the
 * batch's answer, and some batches are refused as a whole.
 *
 * @module
 */

import type { Dialect } from "./dialect.ts";
import { ErrorCode } from "./errors.ts";
import {
  type Decoded,
  errorResponse,
  type JsonRpcErrorResponse,
  type JsonRpcMessage,
  type JsonRpcResponse,
} from "./json_rpc.ts";
import { classifyEra } from "./registry.ts";

/**
 * A batch's entries sorted by {@link splitBatch}.
 *
 * @example
 * ```ts
 * import { type BatchSplit, decodeMessage, splitBatch } from "@anubis/core/engine";
 * import assert from "node:assert/strict";
 * const decoded = decodeMessage('[{"jsonrpc":"2.0","id":1,"method":"ping"},7]');
 * const split: BatchSplit = splitBatch(decoded.kind === "batch" ? decoded.entries : []);
 * assert.equal(split.messages.length, 1);
 * assert.equal(split.errors.length, 1);
 * ```
 */
export interface BatchSplit {
  /** The entries that are messages, to be served. */
  messages: JsonRpcMessage[];
  /**
   * The errors of the other entries (invalid ones, nested batches), which the
   * batch's answer carries with the responses.
   */
  errors: JsonRpcErrorResponse[];
}

/**
 * Sorts a batch's decoded entries into the messages to serve and the errors
 * of the entries that are not messages (`-32600` for a nested batch).
 *
 * @param entries The entries of a decoded batch.
 * @returns The messages and the errors, each in the batch's order.
 *
 * @example
 * ```ts
 * import { decodeMessage, splitBatch } from "@anubis/core/engine";
 * import assert from "node:assert/strict";
 * const decoded = decodeMessage('[{"jsonrpc":"2.0","id":1,"method":"ping"},"x"]');
 * const { messages, errors } = splitBatch(decoded.kind === "batch" ? decoded.entries : []);
 * assert.equal(messages.length, 1);
 * assert.equal(errors[0].error.message, "Invalid Request: not a JSON object");
 * ```
 */
export function splitBatch(entries: readonly Decoded[]): BatchSplit {
  const messages: JsonRpcMessage[] = [];
  const errors: JsonRpcErrorResponse[] = [];
  for (const entry of entries) {
    if (entry.kind === "invalid") errors.push(entry.error);
    else if (entry.kind === "batch") {
      errors.push(errorResponse(null, ErrorCode.INVALID_REQUEST, "Invalid Request: nested batch"));
    } else messages.push(entry.message);
  }
  return { messages, errors };
}

/**
 * Why a batch is refused as a whole for what it holds, if it is: a stateless
 * (2026-07-28) request or notification, or `initialize`. Transports answer a
 * refusal with one `-32600` error for id `null` (HTTP: status 400).
 *
 * @param messages The batch's messages (see {@link splitBatch}).
 * @returns The refusal's error message, or `undefined`.
 *
 * @example
 * ```ts
 * import { batchContentRefusal } from "@anubis/core/engine";
 * import assert from "node:assert/strict";
 * const initialize = { jsonrpc: "2.0", id: 1, method: "initialize", params: {} } as const;
 * assert.equal(batchContentRefusal([initialize]), "initialize must not be part of a JSON-RPC batch");
 * ```
 */
export function batchContentRefusal(messages: readonly JsonRpcMessage[]): string | undefined {
  for (const message of messages) {
    if (!("method" in message)) continue;
    if (classifyEra(message).era === "stateless") {
      return "JSON-RPC batches are not supported by protocol 2026-07-28";
    }
    if (message.method === "initialize") return "initialize must not be part of a JSON-RPC batch";
  }
  return undefined;
}

/**
 * Why a batch is refused on a session, if it is: the session has no protocol
 * version yet, or its version has no batching (only 2025-03-26 has). Answered
 * like {@link batchContentRefusal}.
 *
 * @param dialect The session's dialect (`undefined` before `initialize`).
 * @returns The refusal's error message, or `undefined`.
 *
 * @example
 * ```ts
 * import { batchSessionRefusal } from "@anubis/core/engine";
 * import assert from "node:assert/strict";
 * assert.equal(batchSessionRefusal(undefined), "JSON-RPC batches need an initialized 2025-03-26 session");
 * ```
 */
export function batchSessionRefusal(dialect: Dialect | undefined): string | undefined {
  if (!dialect) return "JSON-RPC batches need an initialized 2025-03-26 session";
  if (!dialect.transportRules.batching) {
    return `JSON-RPC batches are not supported by protocol ${dialect.version}`;
  }
  return undefined;
}

/**
 * Why a batch is refused for its length, if it is: it holds more than
 * `max` entries (every entry counts, valid or not). Answered like
 * {@link batchContentRefusal}: one `-32600` error for id `null`, so a batch
 * of 100,000 bad entries costs one short answer, not 100,000 errors.
 *
 * @param count The batch's entries.
 * @param max The bound (default 1,000).
 * @returns The refusal's error message, or `undefined`.
 *
 * @example
 * ```ts
 * import { batchSizeRefusal } from "@anubis/core/engine";
 * if (batchSizeRefusal(1000) !== undefined) throw new Error("1,000 entries are served");
 * const refusal = batchSizeRefusal(1001);
 * if (refusal !== "Invalid Request: a JSON-RPC batch holds at most 1000 entries (this one has 1001)") {
 *   throw new Error(refusal);
 * }
 * ```
 */
export function batchSizeRefusal(count: number, max = 1000): string | undefined {
  if (count <= max) return undefined;
  return `Invalid Request: a JSON-RPC batch holds at most ${max} entries (this one has ${count})`;
}

/** UTF-8 length of a string, counted without encoding it. */
function utf8Length(text: string): number {
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) continue;
    if (code < 0x800) bytes += 1;
    else if (code >= 0xd800 && code < 0xdc00) (bytes += 2, i++); // a surrogate pair: 4 bytes
    else bytes += 2;
  }
  return bytes;
}

/**
 * Keeps a batch's answer within `maxBytes` of JSON: responses are kept in
 * order while they fit; each one after the budget is spent becomes a short
 * `-32603` error for its id, so every request is still answered and the
 * answer stays bounded (the budget plus about 150 bytes per entry left out).
 * An entry JSON cannot encode is kept for the transport's encoder, which
 * replaces it.
 *
 * @param answer The batch's responses (and the errors of its invalid entries).
 * @param maxBytes The budget in bytes of JSON (default 8 MiB).
 * @returns The answer, the same array when everything fits.
 *
 * @example
 * ```ts
 * import { boundBatchAnswer, type JsonRpcResponse } from "@anubis/core/engine";
 * const big = (id: number): JsonRpcResponse => ({ jsonrpc: "2.0", id, result: { text: "x".repeat(100) } });
 * const answer = boundBatchAnswer([big(1), big(2), big(3)], 300);
 * const codes = answer.map((response) => "error" in response ? response.error.code : "ok");
 * if (codes.join() !== "ok,ok,-32603") throw new Error(codes.join());
 * ```
 */
export function boundBatchAnswer(
  answer: readonly JsonRpcResponse[],
  maxBytes = 8 * 1024 * 1024,
): readonly JsonRpcResponse[] {
  let used = 2; // the brackets
  let bounded: JsonRpcResponse[] | undefined;
  for (let i = 0; i < answer.length; i++) {
    const response = answer[i];
    let size = 0;
    try {
      size = utf8Length(JSON.stringify(response)) + 1;
    } catch {
      // The transport's encoder replaces it with a short error.
    }
    if (used + size <= maxBytes) {
      used += size;
      bounded?.push(response);
      continue;
    }
    bounded ??= answer.slice(0, i);
    bounded.push(errorResponse(
      response.id ?? null,
      ErrorCode.INTERNAL_ERROR,
      `Internal error: the batch's answer exceeds ${maxBytes} bytes, so this response was left out`,
    ));
  }
  return bounded ?? answer;
}
