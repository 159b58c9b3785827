/**
 * The building blocks of results, per version: content blocks, resource
 * contents, tools, prompts, resources, templates, server identity and
 * capabilities. A version's features pick the variant, so each version
 * states only its facts.
 *
 * Objects stay open, as in the spec schemas (extension fields are legal);
 * what differs per version is which fields exist, what they must be and
 * which alternatives a union has.
 *
 * @module
 */

import type { Feature } from "@anubis/core/engine";
import * as s from "@anubis/core/schema";

/** Any JSON object. */
export const anyObject: s.Schema = s.record(s.unknown());
/** A JSON-RPC request id. */
export const requestId: s.Schema = s.union([s.string(), s.integer()]);
/** A progress token. */
export const progressToken: s.Schema = requestId;
/** An optional `_meta` object. */
export const meta: s.Schema = s.optional(anyObject);
/** A URI: a scheme, a colon and no white space (JSON Schema `format: "uri"`). */
export const uri: s.Schema<string> = s.string({ pattern: /^[a-z][a-z0-9+.-]*:\S*$/i });

/** A JSON value as 2026-07-28 defines it: no `null`, no fractions. */
const jsonValue: s.Schema = s.lazy(() =>
  s.union([jsonObject, s.array(jsonValue), s.string(), s.integer(), s.boolean()])
);
/** A JSON object of 2026-07-28 values. */
export const jsonObject: s.Schema = s.record(jsonValue);

const role = s.enumeration(["user", "assistant"]);

/**
 * `shape` when the version has the feature, else nothing.
 *
 * @param present Whether the version has it.
 * @param shape The fields.
 * @returns The fields or none.
 *
 * @example
 * ```ts
 * import * as s from "@anubis/core/schema";
 * import { when } from "./_component_schemas.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(Object.keys(when(false, { title: s.string() })), []);
 * ```
 */
export function when(present: boolean, shape: s.Shape): s.Shape {
  return present ? shape : {};
}
const text = s.string();

/**
 * The component schemas of one version.
 *
 * @example
 * ```ts
 * import * as s from "@anubis/core/schema";
 * import { type ComponentSchemas, componentSchemas } from "./_component_schemas.ts";
 * import assert from "node:assert/strict";
 * const schemas: ComponentSchemas = componentSchemas(new Set(["titles"]));
 * assert.equal(s.validate(schemas.implementation, { name: "a", version: "1" }).ok, true);
 * ```
 */
export interface ComponentSchemas {
  /** `Implementation` (serverInfo). */
  implementation: s.Schema;
  /** `Annotations`. */
  annotations: s.Schema;
  /** One content block of a tool result or prompt message. */
  contentBlock: s.Schema;
  /** Text or blob resource contents. */
  resourceContents: s.Schema;
  /** `Tool`. */
  tool: s.Schema;
  /** `Prompt`. */
  prompt: s.Schema;
  /** `Resource`. */
  resource: s.Schema;
  /** `ResourceTemplate`. */
  resourceTemplate: s.Schema;
  /** The content of a sampling message or result. */
  samplingContent: s.Schema;
  /** `Task` (2025-11-25). */
  task: s.ObjectSchema<s.Shape>;
}

/** The `{type: "object", …}` root every tool input schema has. */
function objectRootSchema(schemaKey: boolean): s.Schema {
  return s.object({
    type: s.literal("object"),
    properties: s.optional(s.record(anyObject)),
    required: s.optional(s.array(s.string())),
    ...when(schemaKey, { $schema: s.optional(s.string()) }),
  });
}

/**
 * The component schemas of a version with the given features.
 *
 * @param features The version's features.
 * @returns The schemas.
 *
 * @example
 * ```ts
 * import * as s from "@anubis/core/schema";
 * import { componentSchemas } from "./_component_schemas.ts";
 * import assert from "node:assert/strict";
 * const { contentBlock } = componentSchemas(new Set(["audio"]));
 * assert.equal(s.validate(contentBlock, { type: "resource_link", uri: "a", name: "a" }).ok, false);
 * ```
 */
export function componentSchemas(features: ReadonlySet<Feature>): ComponentSchemas {
  const has = (f: Feature) => features.has(f);
  const modern = has("result_type");
  // Fields added in 2025-06-18 (BaseMetadata title, `_meta`) and 2025-11-25 (icons).
  const titled = when(has("titles"), { title: s.optional(s.string()), _meta: meta });
  const icon = s.object({
    src: uri,
    mimeType: s.optional(s.string()),
    sizes: s.optional(s.array(s.string())),
    theme: s.optional(s.enumeration(["light", "dark"])),
  });
  const iconed = when(has("icons"), { icons: s.optional(s.array(icon)) });
  const annotations = s.object({
    audience: s.optional(s.array(role)),
    priority: s.optional(s.number({ minimum: 0, maximum: 1 })),
    ...when(has("titles"), { lastModified: s.optional(s.string()) }),
  });
  const metaField = when(has("titles"), { _meta: meta });
  const annotated: s.Shape = { annotations: s.optional(annotations), ...metaField };
  const contents: s.Shape = { uri, mimeType: s.optional(s.string()), ...metaField };
  const resourceContents = s.union([
    s.object({ ...contents, text }),
    s.object({ ...contents, blob: s.string() }),
  ]);
  const resourceFields: s.Shape = {
    uri,
    name: s.string(),
    description: s.optional(s.string()),
    mimeType: s.optional(s.string()),
    size: s.optional(s.number()),
    annotations: s.optional(annotations),
    ...titled,
    ...iconed,
  };
  const media = (type: "image" | "audio") =>
    s.object({ type: s.literal(type), data: s.string(), mimeType: s.string(), ...annotated });
  const blocks: Record<string, s.Schema> = {
    text: s.object({ type: s.literal("text"), text, ...annotated }),
    image: media("image"),
    audio: media("audio"),
    resource: s.object({ type: s.literal("resource"), resource: resourceContents, ...annotated }),
  };
  if (has("resource_links")) {
    blocks.resource_link = s.object({ ...resourceFields, type: s.literal("resource_link") });
  }
  const contentBlock = s.discriminated("type", blocks);
  const sampling: Record<string, s.Schema> = {
    text: blocks.text,
    image: blocks.image,
    audio: blocks.audio,
  };
  if (has("sampling_tools")) {
    sampling.tool_use = s.object({
      type: s.literal("tool_use"),
      id: s.string(),
      name: s.string(),
      input: anyObject,
      _meta: meta,
    });
    sampling.tool_result = s.object({
      type: s.literal("tool_result"),
      toolUseId: s.string(),
      content: s.array(contentBlock),
      structuredContent: s.optional(s.unknown()),
      isError: s.optional(s.boolean()),
      _meta: meta,
    });
  }
  const samplingBlock = s.discriminated("type", sampling);
  const samplingContent = has("sampling_tools")
    ? s.union([samplingBlock, s.array(samplingBlock)])
    : samplingBlock;
  const tool = s.object({
    name: s.string(),
    description: s.optional(s.string()),
    inputSchema: modern
      ? s.object({ type: s.literal("object"), $schema: s.optional(s.string()) })
      : objectRootSchema(has("icons")),
    annotations: s.optional(s.object({
      title: s.optional(s.string()),
      readOnlyHint: s.optional(s.boolean()),
      destructiveHint: s.optional(s.boolean()),
      idempotentHint: s.optional(s.boolean()),
      openWorldHint: s.optional(s.boolean()),
    })),
    // Any JSON Schema from 2026 on; an object root before.
    ...when(has("structured_output"), {
      outputSchema: s.optional(modern ? anyObject : objectRootSchema(has("icons"))),
    }),
    ...when(has("tasks"), {
      execution: s.optional(s.object({
        taskSupport: s.optional(s.enumeration(["forbidden", "optional", "required"])),
      })),
    }),
    ...titled,
    ...iconed,
  });
  const prompt = s.object({
    name: s.string(),
    description: s.optional(s.string()),
    arguments: s.optional(s.array(s.object({
      name: s.string(),
      description: s.optional(s.string()),
      required: s.optional(s.boolean()),
      ...when(has("titles"), { title: s.optional(s.string()) }),
    }))),
    ...titled,
    ...iconed,
  });
  const { uri: _uri, size: _size, ...templateFields } = resourceFields;
  return {
    implementation: s.object({
      name: s.string(),
      version: s.string(),
      ...when(has("titles"), { title: s.optional(s.string()) }),
      ...when(has("icons"), {
        description: s.optional(s.string()),
        websiteUrl: s.optional(uri),
        ...iconed,
      }),
    }),
    annotations,
    contentBlock,
    resourceContents,
    tool,
    prompt,
    resource: s.object(resourceFields),
    resourceTemplate: s.object({ ...templateFields, uriTemplate: s.string() }),
    samplingContent,
    task: s.object({
      taskId: s.string(),
      status: s.enumeration(["working", "input_required", "completed", "failed", "cancelled"]),
      statusMessage: s.optional(s.string()),
      createdAt: s.string(),
      lastUpdatedAt: s.string(),
      ttl: s.nullable(s.integer()),
      pollInterval: s.optional(s.integer()),
    }),
  };
}
