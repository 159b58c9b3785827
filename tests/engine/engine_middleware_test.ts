/** The protocol middleware around the engine: order, short-circuit, both eras, notifications. */

import assert from "node:assert/strict";
import { defineServer, ErrorCode, forMethod, McpError, type Middleware } from "@anubis/core";
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

// The four uses of a middleware, each in both eras: log, reject, rewrite, wrap.
Deno.test("middleware: log, reject, rewrite and wrap, legacy and stateless", async () => {
  const logged: string[] = [];
  const log: Middleware = async (call, next) => {
    logged.push(`> ${call.method}`);
    const result = await next();
    logged.push(`< ${call.method}`);
    return result;
  };
  const reject = forMethod("tools/call", (call, next) => {
    if (call.params.arguments?.text === "forbidden") {
      throw new McpError(ErrorCode.INVALID_PARAMS, "forbidden text");
    }
    return next();
  });
  // The schema wants `text` a string: a number is made one, a missing one defaulted.
  const rewrite = forMethod("tools/call", (call, next) => {
    const args = call.params.arguments ?? {};
    if (typeof args.text === "string") return next();
    const text = args.text === undefined ? "default" : String(args.text);
    return next({ params: { name: call.params.name, arguments: { ...args, text } } });
  });
  const wrap: Middleware = async (call, next) => {
    const result = await next();
    if (call.method !== "tools/call" || !result) return result;
    return { ...result, _meta: { wrapped: true } };
  };
  const server = defineServer({
    name: "s",
    version: "1.0.0",
    middleware: [log, reject, rewrite, wrap],
    tools: [{
      name: "echo",
      inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
      handler: (args: { text: string }) => `echo ${args.text}`,
    }],
  });
  const engine = new Engine(server, { registry: createDefaultRegistry() });
  const session = engine.createSession({ transport: "stdio" });
  const legacy = { transport: "stdio", session };
  await engine.handle({
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "t", version: "0" },
    },
  }, legacy);
  await engine.handle({ jsonrpc: "2.0", method: "notifications/initialized" }, legacy);
  let id = 1;
  for (const stateless of [false, true]) {
    const call = async (args: Record<string, unknown>) =>
      body(
        await engine.handle(
          {
            jsonrpc: "2.0",
            id: id++,
            method: "tools/call",
            params: stateless
              ? { name: "echo", arguments: args, _meta: META }
              : { name: "echo", arguments: args },
          },
          stateless ? { transport: "http" } : legacy,
        ),
      );
    // Rewrite: the schema check and the handler see the rewritten arguments.
    const numbered = await call({ text: 42 });
    assert.equal(numbered.result.content[0].text, "echo 42", JSON.stringify(numbered));
    assert.equal((await call({})).result.content[0].text, "echo default");
    // Untouched: the client's arguments as sent.
    const plain = await call({ text: "hi" });
    assert.equal(plain.result.content[0].text, "echo hi");
    // Wrap: the result as the middleware changed it.
    assert.equal(plain.result._meta.wrapped, true);
    // Reject: the handler is never reached; the client gets the middleware's error.
    const refused = await call({ text: "forbidden" });
    assert.equal(refused.error.code, -32602);
    assert.equal(refused.error.message, "forbidden text");
  }
  // Log: every call, around the rest of the chain (the refused one has no "<").
  assert.equal(logged.filter((line) => line === "> tools/call").length, 8);
  assert.equal(logged.filter((line) => line === "< tools/call").length, 6);
});

Deno.test("middleware: a rewritten call keeps its _meta; a bad replacement is an error", async () => {
  const seen: unknown[] = [];
  const rewrite: Middleware = (call, next) =>
    call.method === "tools/call"
      ? next({ params: { name: "echo", arguments: { text: "x" } } })
      : next();
  const bad: Middleware = (call, next) =>
    call.method === "tools/call" && call.params.name === "bad"
      ? next({ params: "nope" as unknown as Record<string, unknown> })
      : next();
  const server = defineServer({
    name: "s",
    version: "1.0.0",
    middleware: [bad, rewrite, (call, next) => {
      seen.push(call.params._meta);
      return next();
    }],
    tools: [{ name: "echo", handler: () => "ok" }],
  });
  const engine = new Engine(server, { registry: createDefaultRegistry() });
  const ok = body(
    await engine.handle({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "other", _meta: { ...META, progressToken: "p1" } },
    }, { transport: "http" }),
  );
  assert.equal(ok.result.content[0].text, "ok");
  assert.deepEqual(seen, [{ ...META, progressToken: "p1" }]);
  const refused = body(
    await engine.handle({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "bad", _meta: META },
    }, { transport: "http" }),
  );
  assert.ok(refused.error, JSON.stringify(refused));
});
