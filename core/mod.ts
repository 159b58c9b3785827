/**
 * `@anubis/core`: the protocol core of Anubis for TypeScript. JSON-RPC
 * messages, error codes, the dialect contract and version registry, the
 * server definition API, the frame, the dispatch engine for both eras, and the
 * event-store and session-store contracts.
 *
 * @example
 * ```ts
 * import { ErrorCode, McpError } from "@anubis/core";
 * const error = new McpError(ErrorCode.METHOD_NOT_FOUND, "Method not found");
 * console.log(error.code); // -32601
 * ```
 *
 * @module
 */

export * from "./errors.ts";
export * from "./json_rpc.ts";
export * from "./outbound.ts";
export * from "./batch.ts";
export * from "./types.ts";
export * from "./meta.ts";
export * from "./dialect.ts";
export * from "./registry.ts";
export * from "./event_store.ts";
export * from "./session_store.ts";
export * from "./json_schema.ts";
export * from "./uri_template.ts";
export * from "./pagination.ts";
export * from "./request_state.ts";
export * from "./notifier.ts";
export * from "./notification_bus.ts";
export * from "./server.ts";
export type {
  FromJsonSchema,
  InferOutput,
  InferSchema,
  PromptArgs,
  UriVariables,
} from "./infer.ts";
export type { Middleware, MiddlewareCall } from "./middleware.ts";
export { Frame, type FrameContext, type InputOptions } from "./frame.ts";
export * from "./cancellation.ts";
export * from "./session.ts";
export type { SubscriptionFilter } from "./subscriptions.ts";
export * from "./exchange.ts";
export * from "./engine.ts";
export * from "./session_persistence.ts";
