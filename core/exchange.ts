/**
 * What a transport hands the engine with each message ({@link Exchange}) and
 * what it gets back for a request ({@link Reply}), and where the messages a
 * request sends go (`emitter`, for the engine of both eras).
 *
 * @module
 */

import type { JsonRpcMessage } from "./json_rpc.ts";
import type { Session } from "./legacy/session.ts";

/**
 * One inbound message's surroundings, given by the transport.
 *
 * @example
 * ```ts
 * import type { Exchange } from "@anubis/core/engine";
 * const exchange: Exchange = { transport: "http", headers: { "user-agent": "x" } };
 * ```
 */
export interface Exchange {
  /** The legacy session of the connection (stdio) or of the `Mcp-Session-Id` (HTTP). */
  session?: Session;
  /** The transport kind. */
  transport: string;
  /** Request headers, lowercased. */
  headers?: Record<string, string>;
  /** What a middleware attached to the request. */
  assigns?: Record<string, unknown>;
  /** Authentication facts a middleware attached. */
  authInfo?: unknown;
  /**
   * Who the client is when no principal says so (its address), for the task
   * store's per-caller share of an anonymous stateless caller's tasks. Set
   * by the HTTP transport on a stateless `tools/call`.
   */
  client?: string;
  /** Writes a message related to this request (progress, logs, server requests). */
  emit?: (message: JsonRpcMessage) => void | Promise<void>;
  /** Aborts when the transport's request is cancelled (stateless HTTP: the client disconnected). */
  signal?: AbortSignal;
  /**
   * Like `signal`, but asked for only when the request's signal is first
   * needed (a handler reads `frame.signal`, a listen stream opens), so a
   * transport can skip its disconnect watch for requests that never look.
   * Stateless era; used alongside or instead of `signal`.
   */
  lazySignal?: () => AbortSignal;
  /**
   * Closes the connection of this request's SSE stream before its result
   * (SEP-1699 polling): the client reconnects with `Last-Event-ID` and gets
   * the rest of the stream. Returns whether it closed one; only a transport
   * that can resume the stream offers it.
   */
  closeStream?: () => boolean;
}

/** Request-related messages go to the exchange, else to the session's sink. */
export function emitter(
  exchange: Exchange,
  session?: Session,
): (message: JsonRpcMessage) => Promise<void> {
  const emit = exchange.emit;
  if (emit) return (message) => Promise.resolve(emit(message));
  const onMessage = session?.onMessage;
  if (!onMessage) return () => Promise.resolve();
  return (message) => Promise.resolve(onMessage(message, session!));
}
