/**
 * `@anubis/core/engine`: what transports, dialects and stores build on, apart
 * from the authoring API of `@anubis/core`. The dispatch {@link Engine} for
 * both eras, the legacy {@link Session}, the per-request {@link Exchange}, the
 * version {@link Registry} and the {@link Dialect} contract, JSON-RPC
 * decoding and encoding, batch rules, and the helpers the session store and
 * notification bus implementations share.
 *
 * A server author needs none of it: `defineServer` and a transport
 * (`@anubis/transport-stdio`, `@anubis/transport-http`) are the whole path.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { defineServer } from "@anubis/core";
 * import { decodeMessage, Engine, Registry } from "@anubis/core/engine";
 *
 * const engine = new Engine(defineServer({ name: "demo", version: "1.0.0" }), {
 *   registry: new Registry(),
 * });
 * const decoded = decodeMessage('{"jsonrpc":"2.0","id":1,"method":"ping"}');
 * assert.equal(decoded.kind, "request");
 * assert.ok(engine instanceof Engine);
 * ```
 *
 * @module
 */

export {
  classifyMessage,
  type Decoded,
  decodeMessage,
  errorResponse,
  isNotification,
  isRequest,
  type JsonRpcErrorResponse,
  type JsonRpcMessage,
  type JsonRpcResponse,
  type JsonRpcResultResponse,
  notJson,
} from "../json_rpc.ts";
export {
  encodeOutbound,
  reportUnencodable,
  type UnencodableMessage,
  unsentRequestError,
} from "../outbound.ts";
export {
  batchContentRefusal,
  batchSessionRefusal,
  batchSizeRefusal,
  type BatchSplit,
  boundBatchAnswer,
  splitBatch,
} from "../batch.ts";
export { LOG_LEVELS } from "../types.ts";
export { MetaKey } from "../meta.ts";
export {
  CACHEABLE_METHODS,
  type Dialect,
  type EncodeContext,
  type Feature,
  INPUT_REQUIRED_METHODS,
  type TransportRules,
} from "../dialect.ts";
export { classifyEra, type EraClaim, Registry } from "../registry.ts";
export { isStandardSchema, toJsonSchema } from "../json_schema.ts";
export { changeNotification, sessionWantsChange } from "../notifier.ts";
export { Cancellation, type CancellationOptions } from "../cancellation.ts";
export { Session, type SessionOptions } from "../legacy/session.ts";
export type { Exchange } from "../exchange.ts";
export { NoReply, type Reply } from "../reply.ts";
export { Engine, type EngineOptions } from "../engine.ts";
export { assertJsonSafe } from "../legacy/session_persistence.ts";
export { applyTaskOutcome, applyTaskPatch, callerOf, isTerminal } from "../task_store.ts";
export { principalOf } from "../auth_info.ts";
export { type EventLog, EventLogBus, type EventLogBusOptions } from "../event_log_bus.ts";
