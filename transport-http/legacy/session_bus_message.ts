/**
 * What the HTTP handlers of several instances tell each other about a legacy
 * session they may all hold (restored from a shared session store), on a
 * `NotificationBus<SessionBusMessage>` of their own (`sessionBus`).
 *
 * @module
 */

import type { JsonRpcErrorResponse, JsonRpcResultResponse } from "@anubis/core/engine";

/**
 * A message between instances about one session:
 *
 * - `stream_opened`: the client opened the session's standalone stream at the
 *   sender, whose place among the session's streams is `order` (the event
 *   store's id of its opening record; none without an event store); an
 *   instance holding an older connection closes it, so a message never goes
 *   out on two streams.
 * - `response`: the client posted its answer to a server-to-client request at
 *   the sender, which another instance sent (its id's prefix is not the
 *   sender's); the instance that did resolves it.
 *
 * @example
 * ```ts
 * import type { SessionBusMessage } from "@anubis/transport-http";
 * const message: SessionBusMessage = { type: "stream_opened", sessionId: "3f2a…", order: 42 };
 * ```
 */
export type SessionBusMessage =
  | { type: "stream_opened"; sessionId: string; order?: number }
  | {
    type: "response";
    sessionId: string;
    message: JsonRpcResultResponse | JsonRpcErrorResponse;
  };
