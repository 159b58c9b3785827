/**
 * Result encoding per version: legacy versions drop the fields they lack;
 * the stateless era adds `resultType`, the server's identity and caching
 * fields. Objects are copied only where something changes.
 *
 * @module
 */

import { CACHEABLE_METHODS, type EncodeContext } from "@anubis/core/engine";

type Obj = Record<string, unknown>;

/**
 * Returns `obj` itself when it has none of `keys`, else a copy without them.
 *
 * @example
 * ```ts
 * import { strip } from "./_encoding.ts";
 * import assert from "node:assert/strict";
 * const params = { message: "name?", mode: "form" };
 * assert.deepEqual(strip(params, ["mode"]), { message: "name?" });
 * assert.equal(strip(params, ["url"]) === params, true);
 * ```
 */
export function strip<T extends object>(obj: T, keys: readonly string[]): T {
  let out: Obj | undefined;
  for (const key of keys) {
    if (key in obj) {
      out ??= { ...obj } as Obj;
      delete out[key];
    }
  }
  return (out ?? obj) as T;
}

/** Returns `result` itself when `f` keeps every item of the list, else a copy with the new items. */
function mapList(result: Obj, list: string, f: (item: Obj) => Obj): Obj {
  const items = result[list];
  if (!Array.isArray(items)) return result;
  let mapped: unknown[] | undefined;
  for (let i = 0; i < items.length; i++) {
    const next = f(items[i] as Obj);
    if (next !== items[i]) (mapped ??= items.slice())[i] = next;
  }
  return mapped ? { ...result, [list]: mapped } : result;
}

/**
 * The fields each legacy version lacks, by kind of object.
 *
 * @example
 * ```ts
 * import { legacyEncoder, type LegacyOmissions } from "./_encoding.ts";
 * import assert from "node:assert/strict";
 * const omit: LegacyOmissions = {
 *   tool: ["title", "icons"], component: [], argument: [], implementation: [], callResult: [],
 *   content: [], annotations: [], resourceLinks: true,
 * };
 * const encode = legacyEncoder(omit);
 * const tools = [{ name: "a", title: "A", inputSchema: { type: "object" } }];
 * assert.deepEqual(encode("tools/list", { tools }), { // no title for this version
 *   tools: [{ name: "a", inputSchema: { type: "object" } }],
 * });
 * ```
 */
export interface LegacyOmissions {
  /** Tool fields the version lacks. */
  tool: readonly string[];
  /** Prompt, resource, template and resource link fields the version lacks. */
  component: readonly string[];
  /** Prompt argument fields the version lacks. */
  argument: readonly string[];
  /** Implementation (serverInfo) fields the version lacks. */
  implementation: readonly string[];
  /** CallToolResult fields the version lacks. */
  callResult: readonly string[];
  /** Content block and resource contents fields the version lacks. */
  content: readonly string[];
  /** Annotations fields the version lacks. */
  annotations: readonly string[];
  /** Whether the version has `resource_link` content. */
  resourceLinks: boolean;
}

const EMPTY_RESULTS = new Set([
  "ping",
  "logging/setLevel",
  "resources/subscribe",
  "resources/unsubscribe",
]);
const STATELESS_FIELDS = ["resultType", "ttlMs", "cacheScope"];
const SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo";

function isObject(value: unknown): value is Obj {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function linkToText(block: Obj): Obj {
  return { type: "text", text: block.name ? `${block.name}: ${block.uri}` : String(block.uri) };
}

/** The content block encoder of a version. */
function blockEncoder(omit: LegacyOmissions): (block: Obj) => Obj {
  const link = [...omit.component, ...omit.content];
  return (block) => {
    if (block.type === "resource_link" && !omit.resourceLinks) return linkToText(block);
    let out = strip(block, block.type === "resource_link" ? link : omit.content);
    if (isObject(out.annotations)) {
      const annotations = strip(out.annotations, omit.annotations);
      if (annotations !== out.annotations) out = { ...out, annotations };
    }
    if (isObject(out.resource)) {
      const resource = strip(out.resource, omit.content);
      if (resource !== out.resource) out = { ...out, resource };
    }
    return out;
  };
}

/**
 * The legacy result encoder for a version that omits the given fields. Every
 * legacy version also needs an object `structuredContent` and an object
 * `outputSchema`, so other shapes (legal in 2026) are dropped: the text
 * content still carries the value.
 *
 * @param omit What the version lacks.
 * @returns The encoder.
 *
 * @example
 * ```ts
 * import { legacyEncoder } from "./_encoding.ts";
 * import assert from "node:assert/strict";
 * const encode = legacyEncoder({
 *   tool: [], component: [], argument: [], implementation: [], callResult: [],
 *   content: [], annotations: [], resourceLinks: true,
 * });
 * assert.deepEqual(encode("ping", { resultType: "complete" }), {});
 * ```
 */
export function legacyEncoder(
  omit: LegacyOmissions,
): (method: string, result: Record<string, unknown>) => Record<string, unknown> {
  const block = blockEncoder(omit);
  // The newest legacy version keeps every block as it is: skip the walk.
  const blocksKept = omit.resourceLinks && !omit.component.length && !omit.content.length &&
    !omit.annotations.length;
  const tool = (t: Obj): Obj => {
    const out = strip(t, omit.tool);
    return "outputSchema" in out && out.outputSchema !== undefined &&
        (out.outputSchema as Obj).type !== "object"
      ? strip(out, ["outputSchema"])
      : out;
  };
  const prompt = (p: Obj): Obj => {
    const out = strip(p, omit.component);
    return omit.argument.length ? mapList(out, "arguments", (a) => strip(a, omit.argument)) : out;
  };
  const component = (c: Obj): Obj => strip(c, omit.component);
  const contents = (c: Obj): Obj => strip(c, omit.content);
  return (method, result) => {
    if (EMPTY_RESULTS.has(method)) return {};
    let out = strip(result, STATELESS_FIELDS);
    const meta = out._meta as Obj | undefined;
    if (meta && SERVER_INFO_KEY in meta) out = { ...out, _meta: strip(meta, [SERVER_INFO_KEY]) };
    switch (method) {
      case "initialize":
        return out.serverInfo
          ? { ...out, serverInfo: strip(out.serverInfo as Obj, omit.implementation) }
          : out;
      case "tools/list":
        return mapList(out, "tools", tool);
      case "prompts/list":
        return mapList(out, "prompts", prompt);
      case "resources/list":
        return mapList(out, "resources", component);
      case "resources/templates/list":
        return mapList(out, "resourceTemplates", component);
      case "resources/read":
        return mapList(out, "contents", contents);
      case "tools/call": {
        out = strip(out, omit.callResult);
        if ("structuredContent" in out && !isObject(out.structuredContent)) {
          out = strip(out, ["structuredContent"]);
        }
        return blocksKept ? out : mapList(out, "content", block);
      }
      case "prompts/get":
        return blocksKept ? out : mapList(out, "messages", (m) => {
          const c = block(m.content as Obj);
          return c === m.content ? m : { ...m, content: c };
        });
    }
    return out;
  };
}

const noExecution = (tool: Obj): Obj => strip(tool, ["execution"]);

function validTtl(value: unknown): value is number {
  return typeof value === "number" && Number.isInteger(value) && value >= 0;
}

function validScope(value: unknown): value is "public" | "private" {
  return value === "public" || value === "private";
}

/**
 * Encodes a stateless-era result: `resultType`, `_meta` server identity,
 * and the caching fields of cacheable complete results.
 *
 * @param method The request method.
 * @param result The result.
 * @param context The server identity, cache hint and retry flag.
 * @returns The encoded result.
 *
 * @example
 * ```ts
 * import { encodeStatelessResult } from "./_encoding.ts";
 * import assert from "node:assert/strict";
 * const encoded = encodeStatelessResult("tools/list", { tools: [] }, {
 *   serverInfo: { name: "s", version: "1" },
 *   retry: false,
 * });
 * assert.equal(encoded.ttlMs, 0);
 * assert.equal(encoded.cacheScope, "private");
 * ```
 */
export function encodeStatelessResult(
  method: string,
  result: Record<string, unknown>,
  context: EncodeContext,
): Record<string, unknown> {
  const out: Obj = { ...result };
  out.resultType ??= "complete";
  const meta = result._meta as Obj | undefined;
  out._meta = meta
    ? { ...meta, [SERVER_INFO_KEY]: context.serverInfo }
    : { [SERVER_INFO_KEY]: context.serverInfo };
  // Tasks left the core protocol: a tool's `execution` is a 2025-11-25 field.
  if (method === "tools/list" && Array.isArray(out.tools)) {
    out.tools = mapList(out, "tools", noExecution).tools;
  }
  // A task's `ttlMs` is how long the task is kept, not a cache hint.
  if (out.resultType === "task" || method === "tasks/get") return out;
  if (!CACHEABLE_METHODS.has(method) || out.resultType !== "complete") {
    // Deleting only what is there keeps the object's fast shape.
    if ("ttlMs" in out) delete out.ttlMs;
    if ("cacheScope" in out) delete out.cacheScope;
    return out;
  }
  const hint = context.cacheHint;
  if (!validTtl(out.ttlMs)) out.ttlMs = hint && validTtl(hint.ttlMs) ? hint.ttlMs : 0;
  if (!validScope(out.cacheScope)) {
    out.cacheScope = hint && validScope(hint.scope) ? hint.scope : "private";
  }
  if (context.retry) out.ttlMs = 0;
  return out;
}
