/**
 * The dialects' own full schemas (results, server notifications, server
 * requests) judge values the way the official spec JSON schema of their
 * version does: every sample is accepted by both, and every mutation of a
 * sample (a field removed, or replaced by a value of another type) is
 * accepted or rejected by both alike.
 */

import assert from "node:assert/strict";
import type { Dialect } from "@anubis/core/engine";
import * as s from "@anubis/core/schema";
import { ALL_DIALECTS } from "../../dialects/mod.ts";
import {
  ALL_CAPABILITIES,
  SAMPLE_CLIENT_RESULTS,
  SAMPLE_NOTIFICATIONS,
  SAMPLE_SERVER_REQUESTS,
  SAMPLE_TOOL_USE_RESULT,
  SAMPLE_URL_ELICITATION,
  sampleResults,
  SERVER_INFO,
} from "../helpers/dialect_samples.ts";
import { type SpecSchema, specSchemas } from "../helpers/spec_schemas.ts";

type Obj = Record<string, unknown>;
type Judge = (value: unknown) => { ours: boolean; spec: boolean };

const WRONG: readonly unknown[] = [undefined, 42, "x", null, [], {}, true];

/** Every value reached by replacing one node of `value` (down to `depth`) with a wrong one. */
function* mutations(value: unknown, depth = 4, path = ""): Generator<[string, unknown]> {
  if (depth === 0 || typeof value !== "object" || value === null) return;
  const entries = Object.entries(value as Obj);
  for (const [key, child] of entries) {
    for (const wrong of WRONG) {
      const copy: Obj | unknown[] = Array.isArray(value) ? [...value] : { ...value as Obj };
      if (wrong === undefined && !Array.isArray(copy)) delete (copy as Obj)[key];
      else (copy as Obj)[key] = wrong;
      yield [`${path}.${key}=${JSON.stringify(wrong) ?? "(removed)"}`, copy];
    }
    for (const [p, inner] of mutations(child, depth - 1, `${path}.${key}`)) {
      const copy = Array.isArray(value) ? [...value] : { ...value as Obj };
      (copy as Obj)[key] = inner;
      yield [p, copy];
    }
  }
}

function disagreements(judge: Judge, sample: unknown, label: string): string[] {
  const out: string[] = [];
  const first = judge(sample);
  if (!first.ours || !first.spec) {
    out.push(`${label}: sample ours=${first.ours} spec=${first.spec}`);
  }
  for (const [path, mutated] of mutations(sample)) {
    const { ours, spec } = judge(mutated);
    if (ours !== spec) out.push(`${label}${path}: ours=${ours} spec=${spec}`);
  }
  return out;
}

function resultJudge(spec: SpecSchema, dialect: Dialect, method: string): Judge {
  const ours = dialect.requestResultSchema(method)!;
  const def = dialect.era === "stateless" ? undefined : spec.resultDef(method);
  return (value) => ({
    ours: s.validate(ours, value).ok,
    spec: def
      ? spec.checkDef(def, value).length === 0
      : spec.check({ jsonrpc: "2.0", id: 1, result: value }, method).length === 0,
  });
}

const specs = await specSchemas();
const context = { serverInfo: SERVER_INFO, retry: false };

for (const dialect of ALL_DIALECTS) {
  const spec = specs.get(dialect.version)!;

  Deno.test(`${dialect.version}: result schemas judge like the spec schema`, () => {
    const samples = sampleResults(dialect.serverCapabilities(ALL_CAPABILITIES));
    const problems: string[] = [];
    // Results without a definition of their own are only checked as a bare Result.
    const modelled = dialect.requestMethods.filter((m) =>
      spec.resultDef(m) && m !== "tasks/result"
    );
    for (const method of modelled) {
      const judge = resultJudge(spec, dialect, method);
      for (const sample of samples[method]) {
        problems.push(
          ...disagreements(judge, dialect.encodeResult(method, sample, context), method),
        );
      }
    }
    if (dialect.era === "stateless") {
      const inputRequired = {
        resultType: "input_required",
        inputRequests: {
          a: { method: "elicitation/create", params: SAMPLE_SERVER_REQUESTS["elicitation/create"] },
          b: {
            method: "sampling/createMessage",
            params: SAMPLE_SERVER_REQUESTS["sampling/createMessage"],
          },
          c: { method: "roots/list" },
          d: {
            method: "elicitation/create",
            params: { mode: "url", message: "m", url: "https://x" },
          },
        },
        requestState: "s",
      };
      for (const method of ["tools/call", "prompts/get", "resources/read"]) {
        const encoded = dialect.encodeResult(method, inputRequired, context);
        problems.push(...disagreements(resultJudge(spec, dialect, method), encoded, method));
      }
    }
    assert.deepEqual(problems, []);
  });

  Deno.test(`${dialect.version}: client answer schemas judge like the spec`, () => {
    const problems: string[] = [];
    const answers = Object.entries(SAMPLE_CLIENT_RESULTS);
    if (dialect.supportsFeature("sampling_tools")) {
      answers.push(["sampling/createMessage", SAMPLE_TOOL_USE_RESULT]);
    }
    const asked = dialect.era === "stateless"
      ? ["sampling/createMessage", "roots/list", "elicitation/create"]
      : dialect.serverRequestMethods;
    for (const [method, answer] of answers.filter(([m]) => asked.includes(m))) {
      const ours = dialect.requestResultSchema(method)!;
      const def = spec.resultDef(method)!;
      const judge: Judge = (value) => ({
        ours: s.validate(ours, value).ok,
        spec: spec.checkDef(def, value).length === 0,
      });
      problems.push(...disagreements(judge, answer, method));
    }
    assert.deepEqual(problems, []);
  });

  Deno.test(`${dialect.version}: server notification params schemas judge like the spec`, () => {
    const problems: string[] = [];
    for (const method of dialect.serverNotificationMethods) {
      const ours = dialect.serverNotificationParamsSchema(method);
      assert.ok(ours, `no params schema for ${method}`);
      const judge: Judge = (params) => ({
        ours: s.validate(ours, params).ok,
        spec: spec.check({ jsonrpc: "2.0", method, params }).length === 0,
      });
      problems.push(...disagreements(judge, SAMPLE_NOTIFICATIONS[method], method));
    }
    assert.deepEqual(problems, []);
  });

  Deno.test(`${dialect.version}: server request params schemas judge like the spec`, () => {
    const problems: string[] = [];
    // Stateless versions embed them in `input_required` results, without an envelope.
    const stateless = dialect.era === "stateless";
    const methods = stateless
      ? ["sampling/createMessage", "roots/list", "elicitation/create"]
      : dialect.serverRequestMethods;
    for (const method of methods) {
      const ours = dialect.serverRequestParamsSchema(method);
      assert.ok(ours, `no params schema for ${method}`);
      const envelope = stateless ? {} : { jsonrpc: "2.0", id: 1 };
      const judge: Judge = (params) => ({
        ours: s.validate(ours, params).ok,
        spec: spec.check({ ...envelope, method, params }).length === 0,
      });
      const samples = [SAMPLE_SERVER_REQUESTS[method]];
      if (method === "elicitation/create" && dialect.supportsFeature("url_elicitation")) {
        samples.push(SAMPLE_URL_ELICITATION);
      }
      for (const sample of samples) {
        const params = dialect.encodeServerRequest(method, sample);
        problems.push(...disagreements(judge, params, method));
      }
    }
    assert.deepEqual(problems, []);
  });
}
