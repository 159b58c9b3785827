/**
 * Wire fields the spec requires that a server definition may leave out: the
 * engine fills them in so every message stays schema-valid.
 */

import assert from "node:assert/strict";
import { defineServer } from "@anubis/core";
import { Engine, type JsonRpcMessage } from "@anubis/core/engine";
import { createDefaultRegistry } from "@anubis/dialects";

const META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
  "io.modelcontextprotocol/logLevel": "debug",
};

function engineFor(tools: Parameters<typeof defineServer>[0]["tools"]) {
  const server = defineServer({ name: "t", version: "1.0.0", tools });
  return new Engine(server, { registry: createDefaultRegistry() });
}

Deno.test("an inputSchema without type is listed with type object, as written otherwise", async () => {
  const engine = engineFor([
    {
      name: "untyped",
      description: "no type keyword",
      inputSchema: { properties: { q: { type: "string" } }, required: ["q"] },
      handler: () => "ok",
    },
    {
      name: "typed",
      description: "typed",
      inputSchema: { type: "object", properties: {} },
      handler: () => "ok",
    },
  ]);
  const reply = await engine.handle(
    { jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: META } },
    { transport: "test" },
  );
  assert.ok(reply && "result" in reply.message);
  const tools = reply.message.result.tools as Record<string, unknown>[];
  assert.deepEqual(tools[0].inputSchema, {
    type: "object",
    properties: { q: { type: "string" } },
    required: ["q"],
  });
  assert.deepEqual(tools[1].inputSchema, { type: "object", properties: {} });
  engine.close();
});

Deno.test("a log without data sends data: null, which the spec requires", async () => {
  const engine = engineFor([{
    name: "quiet",
    description: "logs nothing in particular",
    handler: async (_args, frame) => {
      await frame.log("info", undefined);
      return "done";
    },
  }]);
  const emitted: JsonRpcMessage[] = [];
  await engine.handle(
    {
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "quiet", arguments: {}, _meta: META },
    },
    { transport: "test", emit: (message) => void emitted.push(message) },
  );
  assert.deepEqual(emitted, [{
    jsonrpc: "2.0",
    method: "notifications/message",
    params: { level: "info", data: null },
  }]);
  engine.close();
});
