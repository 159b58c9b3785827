import assert from "node:assert/strict";
import { defineServer, type JsonRpcRequest } from "@anubis/core";
import { Engine } from "@anubis/core/engine";
import { createDefaultRegistry } from "@anubis/dialects";
import { checkStatelessHeaders, decodeHeaderValue } from "./_stateless_headers.ts";

Deno.test("headers: values are trimmed and base64 sentinels decoded", () => {
  assert.equal(decodeHeaderValue("  foo "), "foo");
  assert.equal(decodeHeaderValue("=?base64?IHBhZGRlZCA=?="), " padded ");
  assert.equal(decodeHeaderValue("=?base64?bGluZTEKbGluZTI=?="), "line1\nline2");
  assert.equal(decodeHeaderValue("=?BASE64?Zm9v?="), "=?BASE64?Zm9v?=");
  assert.equal(decodeHeaderValue("=?base64?Zm9v"), "=?base64?Zm9v");
  assert.equal(decodeHeaderValue("=?base64?Zm9?="), undefined);
  assert.equal(decodeHeaderValue("=?base64?/w==?="), undefined, "invalid UTF-8");
});

Deno.test("headers: the ladder's order and integer parameters", () => {
  const engine = new Engine(
    defineServer({
      name: "s",
      version: "1",
      tools: [{
        name: "get",
        inputSchema: {
          type: "object",
          properties: {
            page: { type: "integer", "x-mcp-header": "Page" },
            filter: {
              type: "object",
              properties: { tag: { type: "string", "x-mcp-header": "Tag" } },
            },
          },
        },
        handler: () => "ok",
      }],
    }),
    { registry: createDefaultRegistry() },
  );
  const call = (args: Record<string, unknown>, version = "2026-07-28"): JsonRpcRequest => ({
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: {
      name: "get",
      arguments: args,
      _meta: { "io.modelcontextprotocol/protocolVersion": version },
    },
  });
  const check = (
    request: JsonRpcRequest,
    headers: Record<string, string>,
    version = "2026-07-28",
  ) => checkStatelessHeaders(request, version, new Headers(headers), engine);
  const base = {
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": "tools/call",
    "mcp-name": "get",
  };
  try {
    assert.equal(check(call({}), base), undefined);
    assert.equal(check(call({ page: 42 }), { ...base, "mcp-param-page": "42.0" }), undefined);
    assert.equal(check(call({ page: 42 }), base)?.code, -32020);
    assert.equal(check(call({ page: 42 }), { ...base, "mcp-param-page": "41" })?.code, -32020);
    assert.equal(
      check(call({ filter: { tag: "a b" } }), { ...base, "mcp-param-tag": "a b" }),
      undefined,
    );
    assert.equal(
      check(call({ filter: { tag: "x" } }), base)?.message.includes("Mcp-Param-Tag"),
      true,
    );
    // Method mismatch precedes the unsupported version; a missing name follows it.
    assert.equal(
      check(call({}, "v9"), { ...base, "mcp-protocol-version": "v9", "mcp-method": "x" }, "v9")
        ?.code,
      -32020,
    );
    assert.equal(
      check(call({}, "v9"), { "mcp-protocol-version": "v9", "mcp-method": "tools/call" }, "v9")
        ?.code,
      -32022,
    );
  } finally {
    engine.close();
  }
});
