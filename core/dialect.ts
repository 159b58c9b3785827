/**
 * The dialect contract: one implementation per protocol version owns every
 * version-specific fact (methods, schemas, capability shaping, features,
 * transport rules, era and result encoding). Adding a version is one module
 * plus one registry entry.
 *
 * @module
 */

import type { McpError } from "./errors.ts";
import type { Schema } from "./schema.ts";
import type { Era, Implementation, ServerCapabilities } from "./types.ts";

/**
 * A version-specific feature the engine asks a dialect about.
 *
 * - `batching`: JSON-RPC batches are part of the version.
 * - `titles`, `icons`, `structured_output`, `resource_links`, `elicitation`,
 *   `url_elicitation`, `sampling_tools`, `tasks`, `audio`, `tool_annotations`,
 *   `completion_context`: the wire fields or methods of that name exist.
 * - `tool_input_errors_as_results`: invalid tool arguments are answered with
 *   an `isError` result rather than `-32602` (SEP-1303, 2025-11-25 on).
 * - `input_required`: server-to-client input is asked through multi
 *   round-trip `input_required` results instead of requests.
 * - `result_type`, `caching`, `discover`, `listen`: the 2026-07-28 additions.
 * - `tasks_extension`: the tasks extension (SEP-2663, `io.modelcontextprotocol/tasks`):
 *   `tasks/get`, `tasks/update` and `tasks/cancel` for requests that declare it,
 *   and `resultType: "task"` results.
 * - `skills_extension`: the skills extension (SEP-2640, `io.modelcontextprotocol/skills`):
 *   `skills/list`, `skills/get` and `resources/directory/read` for a server with skills.
 *
 * @example
 * ```ts
 * import type { Feature } from "@anubis/core/engine";
 * const feature: Feature = "structured_output";
 * ```
 */
export type Feature =
  | "batching"
  | "titles"
  | "icons"
  | "audio"
  | "tool_annotations"
  | "structured_output"
  | "resource_links"
  | "elicitation"
  | "url_elicitation"
  | "sampling_tools"
  | "completion_context"
  | "tasks"
  | "tool_input_errors_as_results"
  | "input_required"
  | "result_type"
  | "caching"
  | "discover"
  | "listen"
  | "tasks_extension"
  | "skills_extension";

/**
 * Transport rules that vary per version.
 *
 * @example
 * ```ts
 * import type { TransportRules } from "@anubis/core/engine";
 * const rules: TransportRules = { batching: false, protocolVersionHeader: true };
 * ```
 */
export interface TransportRules {
  /** JSON-RPC batch arrays are part of the version. */
  batching: boolean;
  /**
   * The `MCP-Protocol-Version` HTTP header is part of the version: clients
   * send it after `initialize` (a session's header must name the session's
   * version) or, in the stateless era, on every request, where a request
   * without it is refused (there is no session to fall back on).
   */
  protocolVersionHeader: boolean;
  /**
   * SSE streams open with a priming event (an `id` and empty `data`), so the
   * client can resume them with `Last-Event-ID` (SEP-1699, 2025-11-25).
   * Absent means `false`.
   */
  primingEvents?: boolean;
  /**
   * The SSE stream answering a POST is recorded, so the server may close the
   * connection and the client resumes it by `GET` with `Last-Event-ID`
   * (polling, SEP-1699, 2025-11-25). Absent means `false`.
   */
  resumablePostStreams?: boolean;
}

/**
 * Caching hints for a cacheable stateless-era result.
 *
 * @example
 * ```ts
 * import type { CacheHint } from "@anubis/core";
 * const hint: CacheHint = { ttlMs: 300_000, scope: "public" };
 * ```
 */
export interface CacheHint {
  /** Freshness in milliseconds; an integer >= 0. */
  ttlMs: number;
  /** `public` when the result is the same for every caller. */
  scope: "public" | "private";
}

/**
 * What a dialect needs to know to encode a result.
 *
 * @example
 * ```ts
 * import type { EncodeContext } from "@anubis/core/engine";
 * const context: EncodeContext = { serverInfo: { name: "s", version: "1" }, retry: false };
 * ```
 */
export interface EncodeContext {
  /** The server's identity, stamped into stateless results' `_meta`. */
  serverInfo: Implementation;
  /** The caching hint for a cacheable result, when the server gave one. */
  cacheHint?: CacheHint;
  /** The request answered a multi round-trip retry, so its result must not be cached. */
  retry: boolean;
}

/**
 * One protocol version. See `@anubis/dialects` for the four implementations.
 *
 * Method lists name what the server handles (`requestMethods`,
 * `notificationMethods`) and what it may send (`serverRequestMethods`,
 * `serverNotificationMethods`).
 *
 * @example
 * ```ts
 * import type { Dialect } from "@anubis/core/engine";
 * function describe(dialect: Dialect): string {
 *   return `${dialect.version} (${dialect.era})`;
 * }
 * ```
 */
export interface Dialect {
  /** The version string, such as `"2025-11-25"`. */
  readonly version: string;
  /** The era the version belongs to. */
  readonly era: Era;
  /** Client-to-server request methods of this version. */
  readonly requestMethods: readonly string[];
  /** Client-to-server notification methods of this version. */
  readonly notificationMethods: readonly string[];
  /** Server-to-client request methods (empty in the stateless era). */
  readonly serverRequestMethods: readonly string[];
  /** Server-to-client notification methods. */
  readonly serverNotificationMethods: readonly string[];
  /** The params schema of a client request, or `undefined` for an unknown method. */
  requestParamsSchema(method: string): Schema | undefined;
  /** The params schema of a client notification, or `undefined` for an unknown method. */
  notificationParamsSchema(method: string): Schema | undefined;
  /**
   * The full result schema of a request (either direction: the server's
   * answers and the client's answers to server requests), or `undefined`
   * when not modelled.
   */
  requestResultSchema(method: string): Schema | undefined;
  /** The params schema of a notification the server sends, or `undefined` when the version lacks it. */
  serverNotificationParamsSchema(method: string): Schema | undefined;
  /** The params schema of a request the server sends, or `undefined` when the version lacks it. */
  serverRequestParamsSchema(method: string): Schema | undefined;
  /** The full envelope schema of every client request of this version. */
  readonly requestMessageSchema: Schema;
  /** The full envelope schema of every client notification of this version. */
  readonly notificationMessageSchema: Schema;
  /** The `notifications/progress` params schema. */
  readonly progressParamsSchema: Schema;
  /**
   * The schema of `params._meta` that every request of a stateless version
   * carries (protocol version, client capabilities, optional client info and
   * log level); `undefined` in the legacy era.
   */
  readonly requestMetaSchema?: Schema;
  /** Keeps only the capabilities this version can advertise. */
  serverCapabilities(declared: ServerCapabilities): ServerCapabilities;
  /** The features of this version. */
  readonly supportedFeatures: readonly Feature[];
  /** Whether this version has a feature. */
  supportsFeature(feature: Feature): boolean;
  /** Transport rules of this version. */
  readonly transportRules: TransportRules;
  /**
   * Encodes the result of a client request for this version: drops fields the
   * version lacks and, in the stateless era, adds `resultType`, the server's
   * identity in `_meta` and the caching fields of cacheable results.
   */
  encodeResult(
    method: string,
    result: Record<string, unknown>,
    context: EncodeContext,
  ): Record<string, unknown>;
  /** Encodes the params of a server-to-client request (or embedded input request) for this version. */
  encodeServerRequest(method: string, params: Record<string, unknown>): Record<string, unknown>;
  /** The error for a resource that does not exist (`-32002` before 2026, `-32602` after). */
  resourceNotFound(uri: string): McpError;
}

/**
 * The methods whose complete stateless results carry `ttlMs` and
 * `cacheScope`.
 *
 * @example
 * ```ts
 * import { CACHEABLE_METHODS } from "@anubis/core/engine";
 * import assert from "node:assert/strict";
 * assert.equal(CACHEABLE_METHODS.has("tools/call"), false);
 * ```
 */
export const CACHEABLE_METHODS: ReadonlySet<string> = new Set([
  "server/discover",
  "tools/list",
  "prompts/list",
  "resources/list",
  "resources/templates/list",
  "resources/read",
  "skills/list",
  "skills/get",
  "resources/directory/read",
]);

/**
 * The methods whose handlers may ask the client for input: in the stateless
 * era their params may carry `inputResponses` and `requestState`, and their
 * results may be `input_required`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { INPUT_REQUIRED_METHODS } from "@anubis/core/engine";
 * assert.ok(INPUT_REQUIRED_METHODS.has("prompts/get"));
 * assert.ok(!INPUT_REQUIRED_METHODS.has("tools/list"));
 * ```
 */
export const INPUT_REQUIRED_METHODS: ReadonlySet<string> = new Set([
  "tools/call",
  "prompts/get",
  "resources/read",
]);
