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
} from "./json_rpc.ts";
import { classifyEra } from "./registry.ts";

/**
 * A batch's entries sorted by {@link splitBatch}.
 *
 * @example
 * ```ts
 * import { type BatchSplit, decodeMessage, splitBatch } from "@anubis/core";
 * const decoded = decodeMessage('[{"jsonrpc":"2.0","id":1,"method":"ping"},7]');
 * const split: BatchSplit = splitBatch(decoded.kind === "batch" ? decoded.entries : []);
 * console.log(split.messages.length, split.errors.length); // 1 1
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
 * import { decodeMessage, splitBatch } from "@anubis/core";
 * const decoded = decodeMessage('[{"jsonrpc":"2.0","id":1,"method":"ping"},"x"]');
 * const { messages, errors } = splitBatch(decoded.kind === "batch" ? decoded.entries : []);
 * console.log(messages.length, errors[0].error.message); // 1 Invalid Request: not a JSON object
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
 * import { batchContentRefusal } from "@anubis/core";
 * const initialize = { jsonrpc: "2.0", id: 1, method: "initialize", params: {} } as const;
 * console.log(batchContentRefusal([initialize])); // initialize must not be part of a JSON-RPC batch
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
 * import { batchSessionRefusal } from "@anubis/core";
 * console.log(batchSessionRefusal(undefined)); // JSON-RPC batches need an initialized 2025-03-26 session
 * ```
 */
export function batchSessionRefusal(dialect: Dialect | undefined): string | undefined {
  if (!dialect) return "JSON-RPC batches need an initialized 2025-03-26 session";
  if (!dialect.transportRules.batching) {
    return `JSON-RPC batches are not supported by protocol ${dialect.version}`;
  }
  return undefined;
}
