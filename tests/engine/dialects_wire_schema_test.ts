/**
 * The dialect encoders against the official spec JSON schemas of each
 * version (the ones the conformance suite's `wire-schema-valid` check uses):
 * every result, capability set, server notification and server request is
 * schema-valid and carries no field its version does not declare.
 */

import assert from "node:assert/strict";
import type { Dialect, EncodeContext } from "@anubis/core/engine";
import { ALL_DIALECTS } from "../../dialects/mod.ts";
import {
  ALL_CAPABILITIES,
  SAMPLE_NOTIFICATIONS,
  SAMPLE_SERVER_REQUESTS,
  SAMPLE_URL_ELICITATION,
  sampleResults,
  SERVER_INFO,
} from "../helpers/dialect_samples.ts";
import { type SpecSchema, specSchemas } from "../helpers/spec_schemas.ts";

type Obj = Record<string, unknown>;

const CONTENT_DEFS: Record<string, string> = {
  text: "TextContent",
  image: "ImageContent",
  audio: "AudioContent",
  resource: "EmbeddedResource",
  resource_link: "ResourceLink",
};
const LIST_DEFS: Record<string, string> = {
  tools: "Tool",
  prompts: "Prompt",
  resources: "Resource",
  resourceTemplates: "ResourceTemplate",
};

const context: EncodeContext = {
  serverInfo: SERVER_INFO,
  cacheHint: { ttlMs: 60_000, scope: "public" },
  retry: false,
};

/** Fields a version does not declare, found in the parts of a result that matter. */
function undeclaredFields(spec: SpecSchema, def: string | undefined, result: Obj): string[] {
  const out: string[] = [];
  const note = (path: string, name: string, value: unknown) => {
    if (!value || typeof value !== "object" || !(name in spec.defs)) return;
    for (const key of spec.undeclared(name, value as Obj)) out.push(`${path}.${key} (${name})`);
  };
  if (def) note("result", def, result);
  note("result.serverInfo", "Implementation", result.serverInfo);
  for (const [list, name] of Object.entries(LIST_DEFS)) {
    (result[list] as Obj[] | undefined)?.forEach((item, i) => note(`${list}[${i}]`, name, item));
  }
  (result.prompts as Obj[] | undefined)?.forEach((p, i) =>
    (p.arguments as Obj[] | undefined)?.forEach((a, j) =>
      note(`prompts[${i}].arguments[${j}]`, "PromptArgument", a)
    )
  );
  const blocks = [
    ...((result.content as Obj[] | undefined) ?? []),
    ...((result.messages as Obj[] | undefined) ?? []).map((m) => m.content as Obj),
  ];
  blocks.forEach((block, i) => {
    note(`content[${i}]`, CONTENT_DEFS[block.type as string], block);
    note(`content[${i}].annotations`, "Annotations", block.annotations);
    const resource = block.resource as Obj | undefined;
    if (resource) note(`content[${i}].resource`, contentsDef(resource), resource);
  });
  (result.contents as Obj[] | undefined)?.forEach((c, i) =>
    note(`contents[${i}]`, contentsDef(c), c)
  );
  return out;
}

function contentsDef(contents: Obj): string {
  return "blob" in contents ? "BlobResourceContents" : "TextResourceContents";
}

function capabilityProblems(spec: SpecSchema, dialect: Dialect): string[] {
  const shaped = dialect.serverCapabilities(ALL_CAPABILITIES) as Obj;
  const problems = spec.checkDef("ServerCapabilities", shaped);
  problems.push(...spec.undeclared("ServerCapabilities", shaped).map((k) => `capability ${k}`));
  const declared = (spec.defs.ServerCapabilities.properties ?? {}) as Record<string, Obj>;
  for (const [key, value] of Object.entries(shaped)) {
    const sub = declared[key]?.properties as Obj | undefined;
    if (!sub || !value) continue;
    for (const name of Object.keys(value as Obj)) {
      if (!(name in sub)) problems.push(`capability ${key}.${name}`);
    }
  }
  return problems;
}

const specs = await specSchemas();

for (const dialect of ALL_DIALECTS) {
  const spec = specs.get(dialect.version)!;
  const stateless = dialect.era === "stateless";

  Deno.test(`${dialect.version}: every result is schema-valid and declares every field`, () => {
    const samples = sampleResults(dialect.serverCapabilities(ALL_CAPABILITIES));
    const problems: string[] = [];
    for (const method of dialect.requestMethods) {
      assert.ok(samples[method], `no sample result for ${method}`);
      for (const sample of samples[method]) {
        const result = dialect.encodeResult(method, sample, context);
        problems.push(...spec.check({ jsonrpc: "2.0", id: 1, result }, method));
        // A task payload is whatever result the task produced.
        const def = method === "tasks/result" ? undefined : spec.resultDef(method);
        problems.push(...undeclaredFields(spec, def, result).map((p) => `${method}: ${p}`));
      }
    }
    assert.deepEqual(problems, []);
  });

  Deno.test(`${dialect.version}: capabilities are shaped to what the version declares`, () => {
    assert.deepEqual(capabilityProblems(spec, dialect), []);
  });

  Deno.test(`${dialect.version}: every server notification is schema-valid`, () => {
    const problems: string[] = [];
    for (const method of dialect.serverNotificationMethods) {
      const params = SAMPLE_NOTIFICATIONS[method];
      assert.ok(params, `no sample params for ${method}`);
      problems.push(...spec.check({ jsonrpc: "2.0", method, params }));
    }
    assert.deepEqual(problems, []);
  });

  Deno.test(`${dialect.version}: every server request (or input request) is schema-valid`, () => {
    const requests: [string, Obj][] = (stateless
      ? ["sampling/createMessage", "roots/list", "elicitation/create"]
      : dialect.serverRequestMethods).map((m) => [m, SAMPLE_SERVER_REQUESTS[m]]);
    if (dialect.supportsFeature("url_elicitation")) {
      requests.push(["elicitation/create", SAMPLE_URL_ELICITATION]);
    }
    const problems: string[] = [];
    if (stateless) {
      const inputRequests: Obj = {};
      requests.forEach(([method, params], i) => {
        inputRequests[`k${i}`] = { method, params: dialect.encodeServerRequest(method, params) };
      });
      for (const method of ["tools/call", "prompts/get", "resources/read"]) {
        const result = dialect.encodeResult(method, {
          resultType: "input_required",
          inputRequests,
          requestState: "s",
        }, context);
        problems.push(...spec.check({ jsonrpc: "2.0", id: 1, result }, method));
        problems.push(
          ...spec.undeclared("InputRequiredResult", result).map((k) =>
            `${method} ${k}`
          ),
        );
      }
    } else {
      for (const [method, params] of requests) {
        const message = {
          jsonrpc: "2.0",
          id: 1,
          method,
          params: dialect.encodeServerRequest(method, params),
        };
        problems.push(...spec.check(message));
      }
    }
    assert.deepEqual(problems, []);
  });
}
