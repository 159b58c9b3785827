/**
 * The full result shape of every request of a version, in both directions:
 * what the server answers (tools, prompts, resources, completion, discover,
 * listen, tasks) and what a client answers to the server's requests
 * (sampling, roots, elicitation). In the stateless era every result carries
 * `resultType`, cacheable ones `ttlMs` and `cacheScope`, and the three input
 * methods may answer `input_required`.
 *
 * @module
 */

import { CACHEABLE_METHODS, type Feature, INPUT_REQUIRED_METHODS } from "@anubis/core/engine";
import * as s from "@anubis/core/schema";
import {
  anyObject,
  componentSchemas,
  jsonObject,
  meta,
  requestId,
  uri,
  when,
} from "./_component_schemas.ts";
import { serverRequestParamsSchemas } from "./_message_schemas.ts";

const cursor = { nextCursor: s.optional(s.string()) };
const empty = s.object({ _meta: meta });

/** The server capability shape of a version. */
function capabilities(features: ReadonlySet<Feature>): s.Schema {
  const flag = s.optional(s.boolean());
  // 2026-07-28 settings are JSON objects of its JSON values.
  const settings = features.has("result_type") ? jsonObject : anyObject;
  const object = s.optional(anyObject);
  return s.object({
    experimental: s.optional(s.record(settings)),
    logging: s.optional(settings),
    completions: s.optional(settings),
    prompts: s.optional(s.object({ listChanged: flag })),
    resources: s.optional(s.object({ subscribe: flag, listChanged: flag })),
    tools: s.optional(s.object({ listChanged: flag })),
    ...when(features.has("tasks"), {
      tasks: s.optional(s.object({
        list: object,
        cancel: object,
        requests: s.optional(s.object({ tools: s.optional(s.object({ call: object })) })),
      })),
    }),
    ...when(features.has("result_type"), { extensions: s.optional(s.record(settings)) }),
  });
}

/**
 * The result schemas of a version with the given features, by method.
 *
 * @param features The version's features.
 * @returns The schemas.
 *
 * @example
 * ```ts
 * import * as s from "@anubis/core/schema";
 * import { resultSchemas } from "./_result_schemas.ts";
 * import assert from "node:assert/strict";
 * const results = resultSchemas(new Set(["result_type", "caching"]));
 * assert.equal(s.validate(results["tools/list"], { tools: [] }).ok, false); // no resultType
 * ```
 */
export function resultSchemas(features: ReadonlySet<Feature>): Record<string, s.Schema> {
  const c = componentSchemas(features);
  const structured = features.has("result_type") ? s.unknown() : anyObject;
  // The spec schema says integer; a client's fractional answer to a number field is accepted.
  const elicitValue = features.has("url_elicitation")
    ? s.union([s.string(), s.number(), s.boolean(), s.array(s.string())])
    : s.union([s.string(), s.number(), s.boolean()]);
  const results: Record<string, s.Shape> = {
    "initialize": {
      protocolVersion: s.string(),
      capabilities: capabilities(features),
      serverInfo: c.implementation,
      instructions: s.optional(s.string()),
    },
    "server/discover": {
      supportedVersions: s.array(s.string()),
      capabilities: capabilities(features),
      instructions: s.optional(s.string()),
    },
    "tools/list": { tools: s.array(c.tool), ...cursor },
    "tools/call": {
      content: s.array(c.contentBlock),
      isError: s.optional(s.boolean()),
      ...when(features.has("structured_output"), { structuredContent: s.optional(structured) }),
    },
    "prompts/list": { prompts: s.array(c.prompt), ...cursor },
    "prompts/get": {
      description: s.optional(s.string()),
      messages: s.array(
        s.object({ role: s.enumeration(["user", "assistant"]), content: c.contentBlock }),
      ),
    },
    "resources/list": { resources: s.array(c.resource), ...cursor },
    "resources/templates/list": { resourceTemplates: s.array(c.resourceTemplate), ...cursor },
    "resources/read": { contents: s.array(c.resourceContents) },
    "completion/complete": {
      completion: s.object({
        values: s.array(s.string()),
        total: s.optional(s.integer()),
        hasMore: s.optional(s.boolean()),
      }),
    },
    "subscriptions/listen": {
      _meta: s.object({ "io.modelcontextprotocol/subscriptionId": requestId }),
    },
    "sampling/createMessage": {
      role: s.enumeration(["user", "assistant"]),
      content: c.samplingContent,
      model: s.string(),
      stopReason: s.optional(s.string()),
    },
    "roots/list": {
      roots: s.array(s.object({ uri, name: s.optional(s.string()), _meta: meta })),
    },
    "elicitation/create": {
      action: s.enumeration(["accept", "decline", "cancel"]),
      content: s.optional(s.record(elicitValue)),
    },
  };
  if (features.has("tasks")) {
    results["tasks/get"] = c.task.shape;
    results["tasks/cancel"] = c.task.shape;
    results["tasks/list"] = { tasks: s.array(c.task), ...cursor };
  }
  if (features.has("skills_extension")) {
    const file = s.object({ uri, digest: s.string(), size: s.integer() });
    const skill = s.object({
      uri,
      frontmatter: s.object({ name: s.string(), description: s.string() }),
      resources: s.union([s.array(file), s.literal("dynamic")]),
      _meta: meta,
    });
    results["skills/list"] = { skills: s.array(skill), ...cursor };
    results["skills/get"] = { skill };
    results["resources/directory/read"] = { resources: s.array(c.resource), ...cursor };
  }
  const out: Record<string, s.Schema> = {
    "ping": empty,
    "logging/setLevel": empty,
    "resources/subscribe": empty,
    "resources/unsubscribe": empty,
    "tasks/result": anyObject,
  };
  const stateless = features.has("result_type");
  for (const [method, shape] of Object.entries(results)) {
    out[method] = s.object({ _meta: meta, ...shape });
  }
  if (!stateless) return out;
  return statelessResults(out, results, features);
}

const CLIENT_ANSWERS = new Set(["sampling/createMessage", "roots/list", "elicitation/create"]);

/** `input_required` results are judged as such, any other as the method's result. */
function eitherResult(complete: s.Schema, inputRequired: s.Schema): s.Schema {
  return {
    kind: "result",
    check(value, path, issues) {
      const type = (value as { resultType?: unknown } | null)?.resultType;
      (type === "input_required" ? inputRequired : complete).check(value, path, issues);
    },
  };
}

/** Adds `resultType`, the caching fields and `input_required` to the results of a stateless version. */
function statelessResults(
  legacy: Record<string, s.Schema>,
  shapes: Record<string, s.Shape>,
  features: ReadonlySet<Feature>,
): Record<string, s.Schema> {
  const c = componentSchemas(features);
  const resultMeta = s.optional(
    s.object({ "io.modelcontextprotocol/serverInfo": s.optional(c.implementation) }),
  );
  const cache = {
    ttlMs: s.integer({ minimum: 0 }),
    cacheScope: s.enumeration(["public", "private"]),
  };
  const requests = serverRequestParamsSchemas(features);
  const inputRequest = s.discriminated(
    "method",
    Object.fromEntries(
      [...CLIENT_ANSWERS].map((method) => [
        method,
        s.object({
          method: s.literal(method),
          params: method === "roots/list" ? s.optional(requests[method]) : requests[method],
        }),
      ]),
    ),
  );
  const inputRequired = s.refine(
    s.object({
      resultType: s.literal("input_required"),
      inputRequests: s.optional(s.record(inputRequest)),
      requestState: s.optional(s.string()),
      _meta: resultMeta,
    }),
    (r) =>
      r.inputRequests === undefined && r.requestState === undefined
        ? "needs inputRequests or requestState"
        : undefined,
  );
  const out: Record<string, s.Schema> = {};
  // The handshake is gone; every other server result gains `resultType`.
  const server = Object.keys(shapes).filter((m) => m !== "initialize" && !CLIENT_ANSWERS.has(m));
  const listenMeta = s.object({
    "io.modelcontextprotocol/subscriptionId": requestId,
    "io.modelcontextprotocol/serverInfo": s.optional(c.implementation),
  });
  for (const method of server) {
    const complete = s.object({
      ...shapes[method],
      _meta: method === "subscriptions/listen" ? listenMeta : resultMeta,
      // Extensions may add values; a result that is not `input_required` is the method's own.
      resultType: s.string(),
      ...when(CACHEABLE_METHODS.has(method), cache),
    });
    out[method] = INPUT_REQUIRED_METHODS.has(method)
      ? eitherResult(complete, inputRequired)
      : complete;
  }
  // Client answers embedded in `inputResponses` are bare results, without `resultType`.
  for (const method of CLIENT_ANSWERS) out[method] = legacy[method];
  return out;
}
