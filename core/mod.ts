/**
 * `@anubis/core`: the protocol core of Anubis for TypeScript. JSON-RPC
 * messages, error codes, the server definition API, the frame,
 * middleware, errors, the wire types a handler returns, and the event-store and
 * session-store contracts. What transports and dialects build on (the engine,
 * sessions, exchanges, the registry, the dialect contract, JSON-RPC codecs)
 * is `@anubis/core/engine`.
 *
 * @example
 * ```ts
 * import { ErrorCode, McpError } from "@anubis/core";
 * import assert from "node:assert/strict";
 * const error = new McpError(ErrorCode.METHOD_NOT_FOUND, "Method not found");
 * assert.equal(error.code, -32601);
 * ```
 *
 * @module
 */

export {
  ErrorCode,
  type ErrorCodeValue,
  type JsonRpcErrorObject,
  McpError,
  type UrlElicitation,
  urlElicitationRequired,
} from "./errors.ts";
export type {
  Annotations,
  AudioContent,
  CallToolResult,
  ClientCapabilities,
  CompleteResult,
  ContentBlock,
  CreateMessageParams,
  CreateMessageResult,
  ElicitParams,
  ElicitResult,
  EmbeddedResource,
  Era,
  GetPromptResult,
  Icon,
  ImageContent,
  Implementation,
  JsonObject,
  JsonValue,
  ListRootsResult,
  LogLevel,
  PromptMessage,
  ReadResourceResult,
  Resource,
  ResourceContents,
  ResourceLink,
  ServerCapabilities,
  TextContent,
} from "./types.ts";
export type { Awaitable } from "./awaitable.ts";
export {
  type CompletionRequest,
  defineServer,
  defineTool,
  type McpServer,
  NO_REPLY,
  type PromptArgument,
  type PromptDefinition,
  type ResourceDefinition,
  type ResourceReadReturn,
  type ResourceTemplateDefinition,
  type ServerDefinition,
  type ToolDefinition,
  type ToolResult,
  type ToolSchema,
  type TypedPrompt,
  type TypedResourceTemplate,
  type TypedServerDefinition,
  type TypedTool,
} from "./server.ts";
export type {
  FromJsonSchema,
  InferOutput,
  InferSchema,
  PromptArgs,
  UriVariables,
} from "./infer.ts";
export { Frame, type FrameContext, type InputOptions } from "./frame.ts";
export type {
  CallReplacement,
  Middleware,
  MiddlewareCall,
  MiddlewareParams,
  Next,
  ParamsOf,
  SessionEnd,
} from "./middleware.ts";
export { forMethod } from "./middleware.ts";
export type { JsonRpcNotification, JsonRpcRequest, RequestId } from "./json_rpc.ts";
export type { CacheHint } from "./dialect.ts";
export { type ChangeListener, Notifier } from "./notifier.ts";
export type { JsonSchema, StandardResult, StandardSchemaV1 } from "./json_schema.ts";
export {
  RequestStateCodec,
  type RequestStateKeys,
  type RequestStateOptions,
  type RequestStatePayload,
  type RequestStateSecret,
} from "./request_state.ts";
export type { EventStore, StoredEvent } from "./event_store.ts";
export type { SessionRecord, SessionStore } from "./session_store.ts";
export type {
  TaskError,
  TaskLease,
  TaskOutcome,
  TaskPage,
  TaskPatch,
  TaskRecord,
  TaskStatus,
  TaskStore,
} from "./task_store.ts";
export { TaskLimitError } from "./task_store.ts";
export { MemoryTaskStore, type MemoryTaskStoreOptions } from "./memory_task_store.ts";
export type { RateLimit, RateLimitStore } from "./rate_limit_store.ts";
export type { AuthInfo } from "./auth_info.ts";
export type { BusMessage, ChangeEvent, NotificationBus } from "./notification_bus.ts";
export { UriTemplate } from "./uri_template.ts";
export {
  defineSkill,
  type DefineSkillOptions,
  type SkillDefinition,
  type SkillFile,
  SKILLS_EXTENSION,
  skillsFromDirectory,
} from "./skills.ts";
export {
  configureLogger,
  type LogFormat,
  type Logger,
  logger,
  type LoggerOptions,
  type OperatorLogLevel,
} from "./logger.ts";
