/**
 * The server definition API: `defineServer` and the component and callback
 * types of a server module.
 *
 * @module
 */

import type { CacheHint } from "./dialect.ts";
import type { Awaitable } from "./awaitable.ts";
import type { Frame } from "./frame.ts";
import type { JsonSchema, StandardSchemaV1 } from "./json_schema.ts";
import type { InferOutput, InferSchema, PromptArgs, UriVariables } from "./infer.ts";
import type { JsonRpcNotification, JsonRpcRequest } from "./json_rpc.ts";
import type { Middleware } from "./middleware.ts";
import { Notifier } from "./notifier.ts";
import { RequestStateCodec } from "./request_state.ts";
import type {
  Annotations,
  CallToolResult,
  CompleteResult,
  GetPromptResult,
  Icon,
  Implementation,
  JsonObject,
  PromptMessage,
  ReadResourceResult,
  Resource,
  ResourceContents,
  ServerCapabilities,
} from "./types.ts";
import { UriTemplate } from "./uri_template.ts";
import { pick } from "./_objects.ts";
import { type SkillDefinition, SKILLS_EXTENSION } from "./skills.ts";
import { prepareTools } from "./_methods/tool_schemas.ts";

/**
 * A schema a tool may declare: a JSON Schema object or a Standard Schema
 * (zod 4, valibot 1, arktype 2…).
 *
 * @example
 * ```ts
 * import type { ToolSchema } from "@anubis/core";
 * const schema: ToolSchema = { type: "object", properties: { city: { type: "string" } } };
 * if (!("properties" in schema)) throw new Error("unexpected");
 * ```
 */
export type ToolSchema = JsonSchema | StandardSchemaV1;

/**
 * What a tool handler returns: a `CallToolResult` whose `structuredContent`
 * has the type its `outputSchema` describes.
 *
 * @example
 * ```ts
 * import type { ToolResult } from "@anubis/core";
 * const result: ToolResult<{ celsius: number }> = {
 *   content: [{ type: "text", text: "21" }],
 *   structuredContent: { celsius: 21 },
 * };
 * if (result.structuredContent?.celsius !== 21) throw new Error("unexpected");
 * ```
 */
export type ToolResult<Output = unknown> = CallToolResult & { structuredContent?: Output };

/**
 * A tool. `inputSchema` is a JSON Schema or a Standard Schema (zod, valibot,
 * arktype…); arguments are validated against it before the handler runs.
 * `Args` is the handler's argument type and `Output` the type of its
 * `structuredContent`; written inline in `defineServer` or `defineTool`,
 * both are inferred from the schemas (see {@link TypedTool}).
 *
 * @example
 * ```ts
 * import type { ToolDefinition } from "@anubis/core";
 * const echo: ToolDefinition<{ text: string }> = {
 *   name: "echo",
 *   description: "Echoes its input",
 *   inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
 *   handler: ({ text }) => text,
 * };
 * ```
 */
export interface ToolDefinition<Args = Record<string, unknown>, Output = unknown> {
  /** The tool name (1–128 of `A-Z a-z 0-9 _ - . /`). */
  name: string;
  /**
   * OAuth scopes a caller needs (all of them) to list and call this tool,
   * read from `frame.context.authInfo.scopes`; without them the tool is
   * hidden from `tools/list`, and `tools/call` refuses it with a JSON-RPC
   * error (`-32600`, `data: { name, scopes }`) that the HTTP transport
   * answers with 403 and the `insufficient_scope` challenge naming the
   * scopes (step-up), in both eras.
   */
  requiredScopes?: readonly string[];
  /** A display name. */
  title?: string;
  /** What the tool does. */
  description?: string;
  /** The arguments schema; defaults to an empty object schema. */
  inputSchema?: ToolSchema;
  /** The schema `structuredContent` must match. */
  outputSchema?: ToolSchema;
  /** Behaviour hints. */
  annotations?: {
    title?: string;
    readOnlyHint?: boolean;
    destructiveHint?: boolean;
    idempotentHint?: boolean;
    openWorldHint?: boolean;
  };
  /** Icons. */
  icons?: Icon[];
  /** Extension metadata. */
  _meta?: Record<string, unknown>;
  /**
   * Whether a call may (`optional`) or must (`required`) run as a task, which
   * the client polls while the handler runs in the background; `forbidden`
   * (the default) answers every call directly. Any task-capable tool makes
   * the server declare tasks.
   */
  execution?: { taskSupport?: "forbidden" | "optional" | "required" };
  /**
   * Where a task-capable call becomes a task in the stateless era, for a
   * client that declared the tasks extension: before the handler runs
   * (`"call"`, the default), or where the handler calls `frame.runAsTask()`
   * (`"handler"`), so the input it asks first goes through the request's own
   * rounds. A legacy task-augmented call is a task from the start either way.
   */
  taskStart?: "call" | "handler";
  /**
   * Runs the tool. Return a result or a string (one text block); throw an
   * `McpError` for a protocol error, anything else becomes an `isError`
   * result. Without a handler, `handleToolCall` of the server is called.
   */
  handler?: (args: Args, frame: Frame) => Awaitable<ToolResult<Output> | string>;
}

/**
 * A tool as written inline: its handler's arguments are what `inputSchema`
 * validates to and its `structuredContent` what `outputSchema` describes
 * (zod 4, valibot 1, arktype 2, or a JSON Schema literal), so the handler
 * needs no annotation and one that contradicts the schema is a type error.
 *
 * @example
 * ```ts
 * import type { TypedTool } from "@anubis/core";
 * const schema = { type: "object", properties: { city: { type: "string" } }, required: ["city"] } as const;
 * const forecast: TypedTool<typeof schema> = {
 *   name: "forecast",
 *   inputSchema: schema,
 *   handler: ({ city }) => `Sunny in ${city}`,
 * };
 * if (forecast.handler?.({ city: "Oslo" }, undefined as never) !== "Sunny in Oslo") {
 *   throw new Error("unexpected");
 * }
 * ```
 */
export type TypedTool<Input = undefined, Output = undefined> =
  & Omit<
    ToolDefinition<NoInfer<InferSchema<Input>>, NoInfer<InferOutput<Output>>>,
    "inputSchema" | "outputSchema"
  >
  & { inputSchema?: Input; outputSchema?: Output };

/**
 * Types a tool defined on its own (in another module, or in a list): its
 * handler's arguments are inferred from `inputSchema` and its
 * `structuredContent` from `outputSchema` (see {@link TypedTool}), or taken
 * from the handler's annotation when the schema says nothing. It returns the
 * tool unchanged, ready for `tools` of `defineServer`.
 *
 * @param tool The tool.
 * @returns The same tool, typed for a server's tool list.
 *
 * @example
 * ```ts
 * import { defineServer, defineTool } from "@anubis/core";
 * import assert from "node:assert/strict";
 * const echo = defineTool({
 *   name: "echo",
 *   description: "Echoes its input",
 *   inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
 *   handler: ({ text }) => text.toUpperCase(),
 * });
 * const server = defineServer({ name: "s", version: "1.0.0", tools: [echo] });
 * assert.equal(server.tools.has("echo"), true);
 * ```
 */
export function defineTool<
  const Input extends ToolSchema | undefined = undefined,
  const Output extends ToolSchema | undefined = undefined,
>(tool: TypedTool<Input, Output>): ToolDefinition<never> {
  return tool as unknown as ToolDefinition<never>;
}

/**
 * A prompt argument; `complete` answers `completion/complete` for it.
 *
 * @example
 * ```ts
 * import type { PromptArgument } from "@anubis/core";
 * const city: PromptArgument = {
 *   name: "city",
 *   required: true,
 *   complete: (value) => ["Paris", "Porto"].filter((c) => c.startsWith(value)),
 * };
 * ```
 */
export interface PromptArgument {
  /** The argument name. */
  name: string;
  /** A display name. */
  title?: string;
  /** What it is for. */
  description?: string;
  /** Whether it must be given. */
  required?: boolean;
  /** Completion values for a partial value. */
  complete?: (value: string, context: Record<string, string>) => Awaitable<string[]>;
}

/**
 * A prompt.
 *
 * @example
 * ```ts
 * import type { PromptDefinition } from "@anubis/core";
 * const greet: PromptDefinition = {
 *   name: "greet",
 *   arguments: [{ name: "name", required: true }],
 *   handler: ({ name }) => [{ role: "user", content: { type: "text", text: `Greet ${name}` } }],
 * };
 * ```
 */
export interface PromptDefinition {
  /** The prompt name. */
  name: string;
  /** A display name. */
  title?: string;
  /** What the prompt is for. */
  description?: string;
  /** Its arguments. */
  arguments?: readonly PromptArgument[];
  /** Icons. */
  icons?: Icon[];
  /** Extension metadata. */
  _meta?: Record<string, unknown>;
  /**
   * OAuth scopes a caller needs (all of them) to list and get this prompt,
   * read from `frame.context.authInfo.scopes`; without them it is hidden from
   * the listing and refused like a tool's (`-32600`; over HTTP 403
   * `insufficient_scope` naming them).
   */
  requiredScopes?: readonly string[];
  /** Builds the messages; without it, `handlePromptGet` of the server is called. */
  handler?: (
    args: Record<string, string>,
    frame: Frame,
  ) => Awaitable<GetPromptResult | PromptMessage[]>;
}

/**
 * A prompt as written inline: its handler's arguments are named by its
 * `arguments`, required ones as `string`, the others optional.
 *
 * @example
 * ```ts
 * import type { TypedPrompt } from "@anubis/core";
 * const greet: TypedPrompt<readonly [{ name: "name"; required: true }]> = {
 *   name: "greet",
 *   arguments: [{ name: "name", required: true }],
 *   handler: ({ name }) => [{ role: "user", content: { type: "text", text: `Greet ${name}` } }],
 * };
 * if (greet.arguments?.[0].name !== "name") throw new Error("unexpected");
 * ```
 */
export type TypedPrompt<Arguments = undefined> =
  & Omit<PromptDefinition, "arguments" | "handler">
  & {
    /** Its arguments. */
    arguments?: Arguments & readonly PromptArgument[];
    /** Builds the messages; without it, `handlePromptGet` of the server is called. */
    handler?: (
      args: NoInfer<PromptArgs<Arguments>>,
      frame: Frame,
    ) => Awaitable<GetPromptResult | PromptMessage[]>;
  };

/**
 * What a resource reader may return: a full result, a list of contents, one
 * contents object, or a string (text contents with the resource's URI and
 * media type).
 *
 * @example
 * ```ts
 * import type { ResourceReadReturn } from "@anubis/core";
 * import assert from "node:assert/strict";
 * const text: ResourceReadReturn = "# Hello";
 * const contents: ResourceReadReturn = { uri: "file:///a.md", mimeType: "text/markdown", text: "# A" };
 * assert.equal(typeof text, "string");
 * assert.equal(Array.isArray(contents), false);
 * ```
 */
export type ResourceReadReturn =
  | ReadResourceResult
  | ResourceContents[]
  | ResourceContents
  | string;

/**
 * A resource with a fixed URI.
 *
 * @example
 * ```ts
 * import type { ResourceDefinition } from "@anubis/core";
 * const readme: ResourceDefinition = {
 *   uri: "file:///readme.md",
 *   name: "readme",
 *   mimeType: "text/markdown",
 *   read: () => "# Hello",
 * };
 * ```
 */
export interface ResourceDefinition extends Resource {
  /**
   * OAuth scopes a caller needs (all of them) to list and read this resource,
   * read from `frame.context.authInfo.scopes`; without them it is hidden from
   * the listing and refused like a tool's (`-32600`; over HTTP 403
   * `insufficient_scope` naming them).
   */
  requiredScopes?: readonly string[];
  /** Reads the resource; without it, `handleResourceRead` of the server is called. */
  read?: (uri: string, frame: Frame) => Awaitable<ResourceReadReturn>;
}

/**
 * A family of resources described by an RFC 6570 (level 1–2) URI template.
 *
 * @example
 * ```ts
 * import type { ResourceTemplateDefinition } from "@anubis/core";
 * const note: ResourceTemplateDefinition = {
 *   uriTemplate: "notes://{id}",
 *   name: "note",
 *   mimeType: "text/plain",
 *   read: (_uri, { id }) => `Note ${id}`,
 * };
 * ```
 */
export interface ResourceTemplateDefinition {
  /** The URI template. */
  uriTemplate: string;
  /** A programmatic name. */
  name: string;
  /** A display name. */
  title?: string;
  /** A description. */
  description?: string;
  /** The media type of matching resources. */
  mimeType?: string;
  /** Annotations. */
  annotations?: Annotations;
  /** Icons. */
  icons?: Icon[];
  /** Extension metadata. */
  _meta?: Record<string, unknown>;
  /** Completion values per template variable. */
  complete?: Record<
    string,
    (value: string, context: Record<string, string>) => Awaitable<string[]>
  >;
  /** Reads a matching resource; without it, `handleResourceRead` of the server is called. */
  read?: (
    uri: string,
    variables: Record<string, string>,
    frame: Frame,
  ) => Awaitable<ResourceReadReturn>;
}

/**
 * A resource template as written inline: `read` gets the variables its URI
 * template names (`"notes://{id}"` gives `{ id: string }`).
 *
 * @example
 * ```ts
 * import type { TypedResourceTemplate } from "@anubis/core";
 * const note: TypedResourceTemplate<"notes://{id}"> = {
 *   uriTemplate: "notes://{id}",
 *   name: "note",
 *   read: (_uri, { id }) => `Note ${id}`,
 * };
 * if (note.read?.("notes://1", { id: "1" }, undefined as never) !== "Note 1") {
 *   throw new Error("unexpected");
 * }
 * ```
 */
export type TypedResourceTemplate<Template = string> =
  & Omit<ResourceTemplateDefinition, "uriTemplate" | "read">
  & {
    /** The URI template. */
    uriTemplate: Template & string;
    /** Reads a matching resource; without it, `handleResourceRead` of the server is called. */
    read?: (
      uri: string,
      variables: NoInfer<UriVariables<Template>>,
      frame: Frame,
    ) => Awaitable<ResourceReadReturn>;
  };

/**
 * A `completion/complete` request as the `complete` callback sees it.
 *
 * @example
 * ```ts
 * import type { CompletionRequest } from "@anubis/core";
 * const request: CompletionRequest = {
 *   ref: { type: "ref/prompt", name: "greet" },
 *   argument: { name: "name", value: "Al" },
 *   context: {},
 * };
 * ```
 */
export interface CompletionRequest {
  /** What is being completed. */
  ref: { type: "ref/prompt"; name: string } | { type: "ref/resource"; uri: string };
  /** The argument and its partial value. */
  argument: { name: string; value: string };
  /** Values of the other arguments already given. */
  context: Record<string, string>;
}

/**
 * Returned by `handleRequest` to complete a request without a response.
 *
 * @example
 * ```ts
 * import { NO_REPLY } from "@anubis/core";
 * import assert from "node:assert/strict";
 * assert.equal(typeof NO_REPLY, "symbol");
 * ```
 */
export const NO_REPLY: unique symbol = Symbol("anubis.noReply");

/**
 * The server definition: identity, components, and the callbacks of seed 000.
 * Every callback is optional. See `core/README.md` for the mapping from the
 * Elixir callbacks.
 *
 * @example
 * ```ts
 * import { defineServer, type ServerDefinition } from "@anubis/core";
 * import assert from "node:assert/strict";
 * const definition: ServerDefinition = { name: "hello", version: "1.0.0" };
 * const server = defineServer(definition);
 * assert.equal(server.info.name, "hello");
 * ```
 */
export interface ServerDefinition {
  /** A programmatic name. */
  name: string;
  /** The version. */
  version: string;
  /** A display name. */
  title?: string;
  /** A description. */
  description?: string;
  /** A website. */
  websiteUrl?: string;
  /** Icons. */
  icons?: Icon[];
  /** Guidance for the model: static text, or computed from the frame (which wins). */
  instructions?: string | ((frame: Frame) => Awaitable<string | undefined>);
  /** Capabilities to declare on top of (and over) those derived from the components. */
  capabilities?: ServerCapabilities;
  /** Tools. */
  tools?: ToolDefinition<never>[];
  /** Prompts. */
  prompts?: PromptDefinition[];
  /** Resources with fixed URIs, listed in this order. */
  resources?: ResourceDefinition[];
  /** Resource templates. */
  resourceTemplates?: ResourceTemplateDefinition[];
  /**
   * Skills (SEP-2640), from `defineSkill` or `skillsFromDirectory`:
   * the server declares the `io.modelcontextprotocol/skills` extension (where
   * the version has extensions: 2026-07-28), serves `skills/list`,
   * `skills/get` and `resources/directory/read`, and lists each `SKILL.md`
   * in `resources/list`; every file is readable with `resources/read`.
   */
  skills?: readonly SkillDefinition[];
  /**
   * The skills this frame may list, get and read; may withhold some or add
   * skills made for this caller with `defineSkill`. Declares skills even
   * without `skills`.
   */
  serverSkills?: (
    skills: readonly SkillDefinition[],
    frame: Frame,
  ) => Awaitable<readonly SkillDefinition[]>;
  /** Serve `resources/directory/read` on skill folders (default `true`). */
  skillsDirectoryRead?: boolean;
  /** Items per page of every list; unset lists everything on one page. */
  pageSize?: number;
  /** Answers `completion/complete` for refs no argument or template completes. */
  complete?: (
    request: CompletionRequest,
    frame: Frame,
  ) => Awaitable<CompleteResult["completion"] | string[]>;
  /** Per-session (legacy) or per-request (stateless) setup; throw to reject. */
  init?: (clientInfo: Implementation | Record<string, never>, frame: Frame) => Awaitable<void>;
  /** Caching hints of cacheable stateless results, by method. */
  cacheHints?: (method: string, frame: Frame) => CacheHint | undefined;
  /** The tools this frame may list and call; may filter or rewrite. */
  serverTools?: (
    tools: ToolDefinition<never>[],
    frame: Frame,
  ) => Awaitable<ToolDefinition<never>[]>;
  /** Calls a tool that has no handler of its own. */
  handleToolCall?: (
    name: string,
    args: Record<string, unknown>,
    frame: Frame,
  ) => Awaitable<CallToolResult | string>;
  /** Gets a prompt that has no handler of its own. */
  handlePromptGet?: (
    name: string,
    args: Record<string, string>,
    frame: Frame,
  ) => Awaitable<GetPromptResult | PromptMessage[]>;
  /** Reads a resource no definition reads (unknown URIs included; throw for not found). */
  handleResourceRead?: (uri: string, frame: Frame) => Awaitable<ResourceReadReturn>;
  /**
   * Low-level handler of every request; `next()` runs the default routing.
   * Return a result, `NO_REPLY`, or throw an `McpError`.
   */
  handleRequest?: (
    request: JsonRpcRequest,
    frame: Frame,
    next: () => Promise<Record<string, unknown>>,
  ) => Awaitable<Record<string, unknown> | typeof NO_REPLY>;
  /**
   * Protocol middleware run around every request and notification served, the
   * first of the list outermost (see {@link Middleware}).
   */
  middleware?: readonly Middleware[];
  /** Handles client notifications other than the lifecycle ones. */
  handleNotification?: (notification: JsonRpcNotification, frame: Frame) => Awaitable<void>;
  /**
   * Decides whether a session found in a session store may be restored; may
   * return the client info to use. Throw to reject (the client gets an
   * internal error).
   */
  handleSessionExpired?: (
    sessionId: string,
    frame: Frame,
  ) => Awaitable<void | { clientInfo?: Implementation }>;
  /** Projects `frame.assigns` to the JSON-safe data a session store keeps. */
  serializeAssigns?: (assigns: Record<string, unknown>) => JsonObject;
  /**
   * The protocol versions served (default: every registered version). Each
   * must be in the engine's registry and at least one must be named: the
   * engine refuses anything else when it is made. Without a legacy version
   * `initialize` is refused (`-32602` naming the supported ones); without
   * 2026-07-28 stateless requests get `-32022`.
   */
  supportedProtocolVersions?: readonly string[];
  /** The `requestState` secret (share it across instances) and lifetime. */
  requestState?: { secret?: string | Uint8Array; ttlMs?: number };
  /** How long a legacy server-to-client request may wait for its answer (default 60 s). */
  clientRequestTimeoutMs?: number;
}

/**
 * A server definition as written inline in `defineServer`: each tool's
 * handler arguments typed by its `inputSchema` and its `structuredContent`
 * by its `outputSchema` ({@link TypedTool}), each prompt's by its
 * `arguments` ({@link TypedPrompt}), each resource template's `read` by its
 * URI template's variables ({@link TypedResourceTemplate}). The type
 * parameters are inferred, one entry per component (`Outputs` one per tool,
 * from its `outputSchema`).
 *
 * @example
 * ```ts
 * import { defineServer, type TypedServerDefinition } from "@anubis/core";
 * const definition: TypedServerDefinition<[undefined], [], []> = {
 *   name: "s",
 *   version: "1.0.0",
 *   tools: [{ name: "ping", handler: () => "pong" }],
 * };
 * if (!defineServer(definition).tools.has("ping")) throw new Error("unexpected");
 * ```
 */
export type TypedServerDefinition<
  Inputs extends readonly unknown[],
  Args extends readonly unknown[],
  Templates extends readonly unknown[],
  Outputs extends readonly unknown[] = [],
> =
  & Omit<ServerDefinition, "tools" | "prompts" | "resourceTemplates">
  & {
    // `Inputs` is inferred from each `inputSchema`, `Outputs` from each
    // `outputSchema` by a second mapped tuple that only infers: inference
    // visits both branches of the conditional, which resolves to `unknown` (a
    // length is never -1), so that tuple adds no excess-property check of its
    // own (intersected as it is, it rejects every tool's other properties).
    // The check is on `Outputs["length"]`: a branch of a check on `Outputs`
    // itself sees a narrowed `Outputs` and infers nothing. `NoInfer` keeps
    // the first tuple from inferring `Outputs` as well.
    /** Tools. */
    tools?:
      & {
        [K in keyof Inputs]: TypedTool<
          Inputs[K],
          NoInfer<K extends keyof Outputs ? Outputs[K] : undefined>
        >;
      }
      & (Outputs["length"] extends -1 ? { [K in keyof Outputs]: { outputSchema?: Outputs[K] } }
        : unknown);
    /** Prompts. */
    prompts?: { [K in keyof Args]: TypedPrompt<Args[K]> };
    /** Resource templates. */
    resourceTemplates?: { [K in keyof Templates]: TypedResourceTemplate<Templates[K]> };
  };

/**
 * A defined server: the definition with its components indexed, its notifier
 * and its request-state codec. One instance serves every request.
 *
 * @example
 * ```ts
 * import { defineServer } from "@anubis/core";
 * const server = defineServer({ name: "s", version: "1.0.0" });
 * server.notify.toolsListChanged();
 * ```
 */
export interface McpServer {
  /** The definition as given. */
  readonly definition: ServerDefinition;
  /** The server's identity. */
  readonly info: Implementation;
  /** Capabilities derived from the components, merged with the declared ones. */
  readonly capabilities: ServerCapabilities;
  /** Publishes change notifications to every transport serving this server. */
  readonly notify: Notifier;
  /** Signs multi round-trip state. */
  readonly requestState: RequestStateCodec;
  /** Tools by name. */
  readonly tools: ReadonlyMap<string, ToolDefinition<never>>;
  /** Prompts by name. */
  readonly prompts: ReadonlyMap<string, PromptDefinition>;
  /** Resources by URI. */
  readonly resources: ReadonlyMap<string, ResourceDefinition>;
  /** Skills by the URI of their `SKILL.md`. */
  readonly skills: ReadonlyMap<string, SkillDefinition>;
  /** Resource templates with their parsed templates. */
  readonly resourceTemplates: readonly {
    definition: ResourceTemplateDefinition;
    template: UriTemplate;
  }[];
  /**
   * Settles once every tool schema is converted for listing. Most are
   * converted by `defineServer` itself, which throws for one it cannot serve;
   * a valibot schema's converter (`@valibot/to-json-schema`) loads lazily, so
   * its failure rejects this promise with the same `TypeError` naming the
   * tool. The cli, `serveStdio()` and `connect()` await it before serving, so
   * a schema that cannot be listed stops the start, never a `tools/list`;
   * code that mounts `createHttpHandler` itself awaits it first.
   */
  readonly ready: Promise<void>;
}

const TOOL_NAME = /^[A-Za-z0-9_.\/-]{1,128}$/;

function indexBy<T>(items: readonly T[], key: (item: T) => string, kind: string): Map<string, T> {
  const map = new Map<string, T>();
  for (const item of items) {
    const k = key(item);
    if (map.has(k)) throw new TypeError(`Duplicate ${kind}: ${k}`);
    map.set(k, item);
  }
  return map;
}

/**
 * Validates a server definition and prepares it for serving. Throws a
 * `TypeError` naming the problem for a definition that cannot be served
 * (duplicate names, bad tool names, a component without a handler and no
 * fallback callback, a malformed URI template, a tool schema that cannot be
 * listed as JSON Schema: every tool's schemas are converted and compiled
 * here, once).
 *
 * @param definition The server definition.
 * @returns The server, ready for any transport.
 *
 * @example
 * ```ts
 * import { defineServer } from "@anubis/core";
 * export default defineServer({
 *   name: "weather",
 *   version: "1.0.0",
 *   tools: [{
 *     name: "forecast",
 *     description: "Tomorrow's weather",
 *     handler: () => ({ content: [{ type: "text", text: "Sunny" }] }),
 *   }],
 * });
 * ```
 */
export function defineServer<
  const Inputs extends readonly unknown[],
  const Args extends readonly unknown[],
  const Templates extends readonly unknown[],
  const Outputs extends readonly unknown[],
>(definition: TypedServerDefinition<Inputs, Args, Templates, Outputs>): McpServer;
export function defineServer(typed: object): McpServer {
  // The typed view is for authoring; serving reads the plain definition.
  const definition = typed as ServerDefinition;
  if (!definition.name || !definition.version) {
    throw new TypeError("A server needs a name and a version");
  }
  const tools = indexBy(definition.tools ?? [], (t) => t.name, "tool");
  for (const tool of tools.values()) {
    if (!TOOL_NAME.test(tool.name)) {
      throw new TypeError(`Invalid tool name: ${JSON.stringify(tool.name)}`);
    }
    if (!tool.handler && !definition.handleToolCall) {
      throw new TypeError(`Tool ${tool.name} has no handler and the server has no handleToolCall`);
    }
  }
  const converted = prepareTools(tools.values());
  // Handled, so a failure nobody awaits is no unhandled rejection; awaiting `ready` still throws.
  converted?.catch(() => {});
  const prompts = indexBy(definition.prompts ?? [], (p) => p.name, "prompt");
  for (const prompt of prompts.values()) {
    if (!prompt.handler && !definition.handlePromptGet) {
      throw new TypeError(
        `Prompt ${prompt.name} has no handler and the server has no handlePromptGet`,
      );
    }
  }
  const resources = indexBy(definition.resources ?? [], (r) => r.uri, "resource");
  for (const resource of resources.values()) {
    if (!resource.read && !definition.handleResourceRead) {
      throw new TypeError(
        `Resource ${resource.uri} has no read and the server has no handleResourceRead`,
      );
    }
  }
  const resourceTemplates = (definition.resourceTemplates ?? []).map((t) => {
    if (!t.read && !definition.handleResourceRead) {
      throw new TypeError(
        `Resource template ${t.uriTemplate} has no read and the server has no handleResourceRead`,
      );
    }
    return { definition: t, template: new UriTemplate(t.uriTemplate) };
  });
  indexBy(resourceTemplates, (t) => t.definition.uriTemplate, "resource template");
  const skills = indexBy(definition.skills ?? [], (k) => k.uri, "skill");

  const info: Implementation = {
    name: definition.name,
    version: definition.version,
    ...pick(definition, ["title", "description", "websiteUrl", "icons"]),
  };
  return {
    definition,
    info,
    capabilities: deriveCapabilities(definition),
    notify: new Notifier(),
    requestState: new RequestStateCodec(definition.requestState),
    tools,
    prompts,
    resources,
    skills,
    resourceTemplates,
    ready: converted ?? Promise.resolve(),
  };
}

function deriveCapabilities(d: ServerDefinition): ServerCapabilities {
  const derived: ServerCapabilities = { logging: {} };
  if (d.tools?.length || d.serverTools || d.handleToolCall) derived.tools = { listChanged: true };
  if (d.prompts?.length || d.handlePromptGet) derived.prompts = { listChanged: true };
  const skills = d.skills?.length || d.serverSkills;
  if (d.resources?.length || d.resourceTemplates?.length || d.handleResourceRead || skills) {
    derived.resources = { subscribe: true, listChanged: true };
  }
  const completes = d.complete ||
    d.prompts?.some((p) => p.arguments?.some((a) => a.complete)) ||
    d.resourceTemplates?.some((t) => t.complete);
  if (completes) derived.completions = {};
  if (d.tools?.some((t) => (t.execution?.taskSupport ?? "forbidden") !== "forbidden")) {
    derived.tasks = { list: {}, cancel: {}, requests: { tools: { call: {} } } };
    // The stateless era's tasks extension (SEP-2663); legacy versions drop the key.
    derived.extensions = { "io.modelcontextprotocol/tasks": {} };
  }
  if (skills) {
    // SEP-2640; versions without extensions (before 2026-07-28) drop the key.
    derived.extensions = {
      ...derived.extensions,
      [SKILLS_EXTENSION]: d.skillsDirectoryRead === false ? {} : { directoryRead: true },
    };
  }
  const declared = d.capabilities;
  if (!derived.extensions || !declared?.extensions) return { ...derived, ...declared };
  // Extensions the server declares join the derived ones.
  return { ...derived, ...declared, extensions: { ...derived.extensions, ...declared.extensions } };
}
