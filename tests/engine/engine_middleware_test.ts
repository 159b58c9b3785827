/** The protocol middleware around the engine: order, short-circuit, both eras, notifications. */

import assert from "node:assert/strict";
import { defineServer, ErrorCode, McpError, type Middleware } from "@anubis/core";
import { Engine } from "@anubis/core/engine";
import { createDefaultRegistry } from "@anubis/dialects";

// deno-lint-ignore no-explicit-any
const body = (reply: unknown): any => (reply as { message: unknown }).message;

const META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
};

Deno.test("middleware: onion order, results, refusals, notifications, both eras", async () => {
  const seen: string[] = [];
  const outer: Middleware = async (call, next) => {
    seen.push(`outer>${call.method}:${call.era}:${call.frame ? "frame" : "-"}`);
    try {
      return await next();
    } catch (error) {
      seen.push(`outer!${McpError.from(error).code}`);
      throw error;
    } finally {
      seen.push(`outer<${call.method}`);
    }
  };
  const policy: Middleware = (call, next) => {
    if (call.params.name === "forbidden") throw new McpError(ErrorCode.INVALID_PARAMS, "no");
    if (call.params.name === "cached") return { content: [{ type: "text", text: "from cache" }] };
    return next();
  };
  const server = defineServer({
    name: "s",
    version: "1.0.0",
    middleware: [outer, policy],
    tools: [{ name: "echo", handler: () => "echoed" }, { name: "forbidden", handler: () => "x" }],
  });
  const engine = new Engine(server, { registry: createDefaultRegistry() });
  const session = engine.createSession({ transport: "stdio" });
  const exchange = { transport: "stdio", session };
  const init = await engine.handle({
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "t", version: "0" },
    },
  }, exchange);
  assert.equal(
    body(init).result.protocolVersion,
    "2025-11-25",
  );
  await engine.handle({ jsonrpc: "2.0", method: "notifications/initialized" }, exchange);
  const call = (id: number, name: string) =>
    engine.handle({ jsonrpc: "2.0", id, method: "tools/call", params: { name } }, exchange);
  assert.deepEqual((await call(1, "echo"))?.message, {
    jsonrpc: "2.0",
    id: 1,
    result: { content: [{ type: "text", text: "echoed" }] },
  });
  assert.equal(
    body(await call(2, "forbidden")).error.code,
    -32602,
  );
  assert.equal(
    body(await call(3, "cached")).result.content[0].text,
    "from cache",
  );
  const stateless = await engine.handle({
    jsonrpc: "2.0",
    id: 4,
    method: "tools/call",
    params: { name: "echo", _meta: META },
  }, { transport: "http" });
  assert.equal(stateless?.status, 200);
  assert.deepEqual(seen, [
    "outer>initialize:legacy:-",
    "outer<initialize",
    "outer>notifications/initialized:legacy:frame",
    "outer<notifications/initialized",
    "outer>tools/call:legacy:frame",
    "outer<tools/call",
    "outer>tools/call:legacy:frame",
    "outer!-32602",
    "outer<tools/call",
    "outer>tools/call:legacy:frame",
    "outer<tools/call",
    "outer>tools/call:stateless:frame",
    "outer<tools/call",
  ]);
  engine.close();
});
