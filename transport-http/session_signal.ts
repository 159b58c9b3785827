/**
 * What the HTTP handlers of several instances tell each other about a legacy
 * session they may all hold (restored from a shared session store), on a
 * `NotificationBus<SessionSignal>` of their own (`sessionBus`).
 *
 * @module
 */

import type { JsonRpcErrorResponse, JsonRpcResultResponse } from "@anubis/core";

/**
 * A message between instances about one session:
 *
 * - `response`: the client posted its answer to a server-to-client request at
 *   the sender, which sent no such request; the instance that did resolves it.
 *
 * @example
 * ```ts
 * import type { SessionSignal } from "@anubis/transport-http";
 * const signal: SessionSignal = {
 *   type: "response",
 *   sessionId: "3f2a…",
 *   message: { jsonrpc: "2.0", id: "anubis-1", result: { action: "decline" } },
 * };
 * ```
 */
export type SessionSignal = {
  type: "response";
  sessionId: string;
  message: JsonRpcResultResponse | JsonRpcErrorResponse;
};
