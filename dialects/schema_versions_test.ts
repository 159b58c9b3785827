/**
 * The version differences of the dialects' full schemas, one assertion per
 * fact of the digest's §7 (the differential test against the spec schemas
 * covers the rest).
 */

import assert from "node:assert/strict";
import type { Dialect } from "@anubis/core/engine";
import * as s from "@anubis/core/schema";
import { v2025_03_26, v2025_06_18, v2025_11_25, v2026_07_28 } from "./mod.ts";

const LEGACY = [v2025_03_26, v2025_06_18, v2025_11_25];
const ALL = [...LEGACY, v2026_07_28];
const complete = { resultType: "complete", ttlMs: 0, cacheScope: "private" };

function accepts(dialect: Dialect, method: string, result: unknown): boolean {
  return s.validate(dialect.requestResultSchema(method)!, result).ok;
}

Deno.test("resource_link content exists from 2025-06-18 on", () => {
  const result = { content: [{ type: "resource_link", uri: "test://a", name: "a" }] };
  assert.equal(accepts(v2025_03_26, "tools/call", result), false);
  for (const d of [v2025_06_18, v2025_11_25]) assert.equal(accepts(d, "tools/call", result), true);
  assert.equal(accepts(v2026_07_28, "tools/call", { ...result, resultType: "complete" }), true);
});

Deno.test("structured output is an object in 2025, any JSON value in 2026", () => {
  const array = { content: [], structuredContent: [1, 2] };
  for (const d of [v2025_06_18, v2025_11_25]) assert.equal(accepts(d, "tools/call", array), false);
  assert.equal(accepts(v2026_07_28, "tools/call", { ...array, resultType: "complete" }), true);
  const tool = { name: "t", inputSchema: { type: "object" }, outputSchema: { type: "array" } };
  assert.equal(accepts(v2025_11_25, "tools/list", { tools: [tool] }), false);
  assert.equal(accepts(v2026_07_28, "tools/list", { tools: [tool], ...complete }), true);
});

Deno.test("every tool input schema has an object root", () => {
  for (const d of ALL) {
    const result = { tools: [{ name: "t", inputSchema: { type: "string" } }], ...complete };
    assert.equal(accepts(d, "tools/list", result), false, d.version);
  }
});

Deno.test("2026 results need resultType, and cacheable ones ttlMs and cacheScope", () => {
  assert.equal(accepts(v2026_07_28, "completion/complete", { completion: { values: [] } }), false);
  assert.equal(
    accepts(v2026_07_28, "completion/complete", {
      completion: { values: [] },
      resultType: "complete",
    }),
    true,
  );
  assert.equal(accepts(v2026_07_28, "tools/list", { tools: [], resultType: "complete" }), false);
  assert.equal(
    accepts(v2026_07_28, "tools/list", { tools: [], ...complete, ttlMs: -1 }),
    false,
    "ttlMs is an integer >= 0",
  );
  for (const d of LEGACY) assert.equal(accepts(d, "tools/list", { tools: [] }), true);
});

Deno.test("2026 input methods may answer input_required, with valid embedded requests", () => {
  const asking = (params: unknown) => ({
    resultType: "input_required",
    inputRequests: { a: { method: "sampling/createMessage", params } },
  });
  const params = { messages: [], maxTokens: 10 };
  for (const method of ["tools/call", "prompts/get", "resources/read"]) {
    assert.equal(accepts(v2026_07_28, method, asking(params)), true, method);
    assert.equal(accepts(v2026_07_28, method, asking({ messages: [] })), false, method);
  }
  assert.equal(accepts(v2026_07_28, "tools/list", asking(params)), false);
});

Deno.test("elicitation: no URL mode before 2025-11-25, no elicitationId after it", () => {
  const url = { mode: "url", message: "Sign in", url: "https://example.com" };
  const valid = (d: Dialect, params: unknown) =>
    s.validate(d.serverRequestParamsSchema("elicitation/create")!, params).ok;
  assert.equal(valid(v2025_06_18, url), false);
  assert.equal(valid(v2025_11_25, url), false, "2025-11-25 needs the elicitationId");
  assert.equal(valid(v2025_11_25, { ...url, elicitationId: "e" }), true);
  assert.equal(valid(v2026_07_28, url), true);
  assert.equal(v2025_03_26.serverRequestParamsSchema("elicitation/create"), undefined);
});

Deno.test("server notifications exist per version", () => {
  const has = (d: Dialect, m: string) => d.serverNotificationParamsSchema(m) !== undefined;
  assert.deepEqual(
    ALL.map((d) => has(d, "notifications/elicitation/complete")),
    [false, false, true, false],
  );
  assert.deepEqual(
    ALL.map((d) => has(d, "notifications/tasks/status")),
    [false, false, true, false],
  );
  assert.deepEqual(
    ALL.map((d) => has(d, "notifications/subscriptions/acknowledged")),
    [false, false, false, true],
  );
  const cancelled = (d: Dialect) =>
    s.validate(d.serverNotificationParamsSchema("notifications/cancelled")!, {}).ok;
  assert.deepEqual(ALL.map(cancelled), [false, false, true, false], "requestId optional in 11-25");
});

Deno.test("client answers: sampling tool use and multi-select elicitation from 2025-11-25", () => {
  const toolUse = {
    role: "assistant",
    content: [{ type: "tool_use", id: "u", name: "t", input: {} }],
    model: "m",
  };
  assert.deepEqual(ALL.map((d) => accepts(d, "sampling/createMessage", toolUse)), [
    false,
    false,
    true,
    true,
  ]);
  const multi = { action: "accept", content: { colors: ["red"] } };
  assert.equal(v2025_03_26.requestResultSchema("elicitation/create"), undefined);
  assert.deepEqual(LEGACY.slice(1).map((d) => accepts(d, "elicitation/create", multi)), [
    false,
    true,
  ]);
  assert.equal(accepts(v2026_07_28, "elicitation/create", multi), true);
});
