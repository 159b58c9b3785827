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

export * from "../json_rpc.ts";
export * from "../outbound.ts";
export * from "../batch.ts";
export { type Era, LOG_LEVELS } from "../types.ts";
export * from "../meta.ts";
export * from "../dialect.ts";
export { classifyEra, type EraClaim, Registry } from "../registry.ts";
export {
  compileValidator,
  isStandardSchema,
  type JsonSchema,
  type StandardResult,
  type StandardSchemaV1,
  toJsonSchema,
  type Validation,
  type Validator,
} from "../json_schema.ts";
export * from "../pagination.ts";
export * from "../notifier.ts";
export * from "../notification_bus.ts";
export * from "../cancellation.ts";
export * from "../legacy/session.ts";
export type { SubscriptionFilter } from "../subscriptions.ts";
export type { Exchange, Reply } from "../exchange.ts";
export * from "../engine.ts";
export * from "../legacy/session_persistence.ts";
export { applyTaskOutcome, applyTaskPatch, callerOf, isTerminal } from "../task_store.ts";
export { principalOf } from "../auth_info.ts";
export { NoReply } from "../dispatch.ts";
