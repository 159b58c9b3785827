/**
 * MCP wire types shared by every protocol version. Each type is the union of
 * what the versions allow; dialects drop what their version lacks when they
 * encode a result.
 *
 * @module
 */

/**
 * A JSON object.
 *
 * @example
 * ```ts
 * import type { JsonObject } from "@anubis/core";
 * const value: JsonObject = { a: 1, b: [true, null] };
 * ```
 */
export type JsonObject = { [key: string]: JsonValue };

/**
 * Any JSON value.
 *
 * @example
 * ```ts
 * import type { JsonValue } from "@anubis/core";
 * const value: JsonValue = ["x", 1, { y: false }];
 * ```
 */
export type JsonValue = string | number | boolean | null | JsonValue[] | {
  [key: string]: JsonValue;
};

/**
 * The protocol era: `legacy` versions use the `initialize` handshake and
 * sessions; `stateless` versions carry everything in each request's `_meta`.
 *
 * @example
 * ```ts
 * import type { Era } from "@anubis/core";
 * const era: Era = "stateless";
 * ```
 */
export type Era = "legacy" | "stateless";

/**
 * An icon for an implementation, tool, prompt or resource (2025-11-25 on).
 *
 * @example
 * ```ts
 * import type { Icon } from "@anubis/core";
 * const icon: Icon = { src: "https://example.com/icon.png", mimeType: "image/png" };
 * ```
 */
export interface Icon {
  /** The icon URL or data URI. */
  src: string;
  /** The icon's media type. */
  mimeType?: string;
  /** Sizes such as `"48x48"`. */
  sizes?: string[];
  /** The theme the icon is meant for. */
  theme?: "light" | "dark";
}

/**
 * The name and version of a client or server.
 *
 * @example
 * ```ts
 * import type { Implementation } from "@anubis/core";
 * const info: Implementation = { name: "weather", version: "1.0.0" };
 * ```
 */
export interface Implementation {
  /** A programmatic name. */
  name: string;
  /** The version. */
  version: string;
  /** A display name (2025-06-18 on). */
  title?: string;
  /** A description (2025-11-25 on). */
  description?: string;
  /** A website (2025-11-25 on). */
  websiteUrl?: string;
  /** Icons (2025-11-25 on). */
  icons?: Icon[];
  /** Fields added by later versions or extensions. */
  [key: string]: unknown;
}

/**
 * Annotations on content and resources.
 *
 * @example
 * ```ts
 * import type { Annotations } from "@anubis/core";
 * const a: Annotations = { audience: ["user"], priority: 0.5 };
 * ```
 */
export interface Annotations {
  /** Who the content is meant for. */
  audience?: ("user" | "assistant")[];
  /** Importance from 0 to 1. */
  priority?: number;
  /** ISO 8601 time of the last modification (2025-06-18 on). */
  lastModified?: string;
}

/**
 * Text content.
 *
 * @example
 * ```ts
 * import type { TextContent } from "@anubis/core";
 * const c: TextContent = { type: "text", text: "hello" };
 * ```
 */
export interface TextContent {
  /** Always `"text"`. */
  type: "text";
  /** The text. */
  text: string;
  /** Annotations. */
  annotations?: Annotations;
  /** Extension metadata. */
  _meta?: Record<string, unknown>;
}

/**
 * Image content, base64 encoded.
 *
 * @example
 * ```ts
 * import type { ImageContent } from "@anubis/core";
 * const c: ImageContent = { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" };
 * ```
 */
export interface ImageContent {
  /** Always `"image"`. */
  type: "image";
  /** Base64 data. */
  data: string;
  /** The media type. */
  mimeType: string;
  /** Annotations. */
  annotations?: Annotations;
  /** Extension metadata. */
  _meta?: Record<string, unknown>;
}

/**
 * Audio content, base64 encoded.
 *
 * @example
 * ```ts
 * import type { AudioContent } from "@anubis/core";
 * const c: AudioContent = { type: "audio", data: "UklGRg==", mimeType: "audio/wav" };
 * ```
 */
export interface AudioContent {
  /** Always `"audio"`. */
  type: "audio";
  /** Base64 data. */
  data: string;
  /** The media type. */
  mimeType: string;
  /** Annotations. */
  annotations?: Annotations;
  /** Extension metadata. */
  _meta?: Record<string, unknown>;
}

/**
 * The contents of a resource: text or a base64 blob.
 *
 * @example
 * ```ts
 * import type { ResourceContents } from "@anubis/core";
 * const c: ResourceContents = { uri: "file:///a.txt", mimeType: "text/plain", text: "a" };
 * ```
 */
export type ResourceContents =
  | { uri: string; mimeType?: string; text: string; _meta?: Record<string, unknown> }
  | { uri: string; mimeType?: string; blob: string; _meta?: Record<string, unknown> };

/**
 * A resource embedded in content.
 *
 * @example
 * ```ts
 * import type { EmbeddedResource } from "@anubis/core";
 * const c: EmbeddedResource = { type: "resource", resource: { uri: "test://x", text: "x" } };
 * ```
 */
export interface EmbeddedResource {
  /** Always `"resource"`. */
  type: "resource";
  /** The resource contents. */
  resource: ResourceContents;
  /** Annotations. */
  annotations?: Annotations;
  /** Extension metadata. */
  _meta?: Record<string, unknown>;
}

/**
 * A link to a resource (2025-06-18 on).
 *
 * @example
 * ```ts
 * import type { ResourceLink } from "@anubis/core";
 * const c: ResourceLink = { type: "resource_link", uri: "file:///a", name: "a" };
 * ```
 */
export interface ResourceLink extends Omit<Resource, "read"> {
  /** Always `"resource_link"`. */
  type: "resource_link";
}

/**
 * One block of content in a tool result or prompt message.
 *
 * @example
 * ```ts
 * import type { ContentBlock } from "@anubis/core";
 * const blocks: ContentBlock[] = [{ type: "text", text: "hi" }];
 * ```
 */
export type ContentBlock =
  | TextContent
  | ImageContent
  | AudioContent
  | EmbeddedResource
  | ResourceLink;

/**
 * A resource a server lists (without its reader).
 *
 * @example
 * ```ts
 * import type { Resource } from "@anubis/core";
 * const r: Resource = { uri: "file:///a.txt", name: "a.txt", mimeType: "text/plain" };
 * ```
 */
export interface Resource {
  /** The resource URI. */
  uri: string;
  /** A programmatic name. */
  name: string;
  /** A display name (2025-06-18 on). */
  title?: string;
  /** A description. */
  description?: string;
  /** The media type. */
  mimeType?: string;
  /** Size in bytes. */
  size?: number;
  /** Annotations. */
  annotations?: Annotations;
  /** Icons (2025-11-25 on). */
  icons?: Icon[];
  /** Extension metadata. */
  _meta?: Record<string, unknown>;
}

/**
 * The result of `tools/call`.
 *
 * @example
 * ```ts
 * import type { CallToolResult } from "@anubis/core";
 * const r: CallToolResult = { content: [{ type: "text", text: "done" }] };
 * ```
 */
export interface CallToolResult {
  /** The content blocks. */
  content: ContentBlock[];
  /** Structured output matching the tool's `outputSchema` (2025-06-18 on). */
  structuredContent?: unknown;
  /** `true` when the tool failed. */
  isError?: boolean;
  /** Extension metadata. */
  _meta?: Record<string, unknown>;
  /** Fields added by later versions or extensions. */
  [key: string]: unknown;
}

/**
 * A prompt message.
 *
 * @example
 * ```ts
 * import type { PromptMessage } from "@anubis/core";
 * const m: PromptMessage = { role: "user", content: { type: "text", text: "Hi" } };
 * ```
 */
export interface PromptMessage {
  /** Who says it. */
  role: "user" | "assistant";
  /** The content. */
  content: ContentBlock;
}

/**
 * The result of `prompts/get`.
 *
 * @example
 * ```ts
 * import type { GetPromptResult } from "@anubis/core";
 * const r: GetPromptResult = { messages: [] };
 * ```
 */
export interface GetPromptResult {
  /** A description. */
  description?: string;
  /** The messages. */
  messages: PromptMessage[];
  /** Extension metadata. */
  _meta?: Record<string, unknown>;
  /** Fields added by later versions or extensions. */
  [key: string]: unknown;
}

/**
 * The result of `resources/read`.
 *
 * @example
 * ```ts
 * import type { ReadResourceResult } from "@anubis/core";
 * const r: ReadResourceResult = { contents: [{ uri: "test://a", text: "a" }] };
 * ```
 */
export interface ReadResourceResult {
  /** The contents. */
  contents: ResourceContents[];
  /** Extension metadata. */
  _meta?: Record<string, unknown>;
  /** Fields added by later versions or extensions. */
  [key: string]: unknown;
}

/**
 * The result of `completion/complete`.
 *
 * @example
 * ```ts
 * import type { CompleteResult } from "@anubis/core";
 * const r: CompleteResult = { completion: { values: ["paris"] } };
 * ```
 */
export interface CompleteResult {
  /** The completion values. */
  completion: { values: string[]; total?: number; hasMore?: boolean };
  /** Fields added by later versions or extensions. */
  [key: string]: unknown;
}

/**
 * Server capabilities, as declared by a server; dialects shape them per
 * version before advertising.
 *
 * @example
 * ```ts
 * import type { ServerCapabilities } from "@anubis/core";
 * const caps: ServerCapabilities = { tools: { listChanged: true }, logging: {} };
 * ```
 */
export interface ServerCapabilities {
  /** Experimental capabilities. */
  experimental?: Record<string, object>;
  /** The server can send log messages. */
  logging?: Record<string, never>;
  /** The server answers `completion/complete`. */
  completions?: Record<string, never>;
  /** The server offers prompts. */
  prompts?: { listChanged?: boolean };
  /** The server offers resources. */
  resources?: { subscribe?: boolean; listChanged?: boolean };
  /** The server offers tools. */
  tools?: { listChanged?: boolean };
  /** Tasks (2025-11-25 only). */
  tasks?: Record<string, unknown>;
  /** Extensions (2026-07-28 on). */
  extensions?: Record<string, object>;
}

/**
 * Client capabilities as a request or the handshake declares them.
 *
 * @example
 * ```ts
 * import type { ClientCapabilities } from "@anubis/core";
 * const caps: ClientCapabilities = { elicitation: {}, sampling: {} };
 * ```
 */
export interface ClientCapabilities {
  /** Experimental capabilities. */
  experimental?: Record<string, object>;
  /** The client lists roots. */
  roots?: { listChanged?: boolean };
  /** The client samples an LLM. */
  sampling?: { context?: object; tools?: object };
  /** The client asks its user for input. */
  elicitation?: { form?: object; url?: object };
  /** Tasks (2025-11-25 only). */
  tasks?: Record<string, unknown>;
  /** Extensions (2026-07-28 on). */
  extensions?: Record<string, object>;
  /** Fields added by later versions or extensions. */
  [key: string]: unknown;
}

/**
 * A log level, lowest first.
 *
 * @example
 * ```ts
 * import type { LogLevel } from "@anubis/core";
 * const level: LogLevel = "warning";
 * ```
 */
export type LogLevel =
  | "debug"
  | "info"
  | "notice"
  | "warning"
  | "error"
  | "critical"
  | "alert"
  | "emergency";

/**
 * Every log level, lowest first.
 *
 * @example
 * ```ts
 * import { LOG_LEVELS } from "@anubis/core/engine";
 * import assert from "node:assert/strict";
 * assert.equal(LOG_LEVELS.indexOf("error") > LOG_LEVELS.indexOf("info"), true);
 * ```
 */
export const LOG_LEVELS: readonly LogLevel[] = [
  "debug",
  "info",
  "notice",
  "warning",
  "error",
  "critical",
  "alert",
  "emergency",
];

/**
 * The `elicitation/create` params (form or URL mode).
 *
 * @example
 * ```ts
 * import type { ElicitParams } from "@anubis/core";
 * const p: ElicitParams = {
 *   message: "Your name?",
 *   requestedSchema: { type: "object", properties: { name: { type: "string" } } },
 * };
 * ```
 */
export type ElicitParams =
  | {
    mode?: "form";
    message: string;
    requestedSchema: { type: "object"; properties: Record<string, unknown>; required?: string[] };
    [key: string]: unknown;
  }
  | { mode: "url"; message: string; url: string; elicitationId?: string; [key: string]: unknown };

/**
 * The client's answer to an elicitation.
 *
 * @example
 * ```ts
 * import type { ElicitResult } from "@anubis/core";
 * const r: ElicitResult = { action: "accept", content: { name: "Alice" } };
 * ```
 */
export interface ElicitResult {
  /** What the user did. */
  action: "accept" | "decline" | "cancel";
  /** The submitted values, when accepted. */
  content?: Record<string, string | number | boolean | string[]>;
  /** Fields added by later versions or extensions. */
  [key: string]: unknown;
}

/**
 * The `sampling/createMessage` params.
 *
 * @example
 * ```ts
 * import type { CreateMessageParams } from "@anubis/core";
 * const p: CreateMessageParams = {
 *   messages: [{ role: "user", content: { type: "text", text: "Hi" } }],
 *   maxTokens: 100,
 * };
 * ```
 */
export interface CreateMessageParams {
  /** The conversation. */
  messages: { role: "user" | "assistant"; content: unknown }[];
  /** The token budget. */
  maxTokens: number;
  /** A system prompt. */
  systemPrompt?: string;
  /** Fields added by later versions or extensions. */
  [key: string]: unknown;
}

/**
 * The client's sampled message.
 *
 * @example
 * ```ts
 * import type { CreateMessageResult } from "@anubis/core";
 * const r: CreateMessageResult = {
 *   role: "assistant",
 *   content: { type: "text", text: "Paris" },
 *   model: "m",
 * };
 * ```
 */
export interface CreateMessageResult {
  /** Always the assistant. */
  role: "user" | "assistant";
  /** The content. */
  content: unknown;
  /** The model used. */
  model: string;
  /** Why sampling stopped. */
  stopReason?: string;
  /** Fields added by later versions or extensions. */
  [key: string]: unknown;
}

/**
 * The client's roots.
 *
 * @example
 * ```ts
 * import type { ListRootsResult } from "@anubis/core";
 * const r: ListRootsResult = { roots: [{ uri: "file:///home/me", name: "home" }] };
 * ```
 */
export interface ListRootsResult {
  /** The roots. */
  roots: { uri: string; name?: string; [key: string]: unknown }[];
  /** Fields added by later versions or extensions. */
  [key: string]: unknown;
}
