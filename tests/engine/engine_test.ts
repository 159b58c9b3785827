/**
 * The engine in process, with the real dialects: callbacks of seed 000 and
 * the era rules, asserted on the exact wire shape.
 */

import assert from "node:assert/strict";
import { ErrorCode, type JsonRpcRequest, McpError, NO_REPLY } from "@anubis/core";
import type { JsonRpcMessage, Session } from "@anubis/core/engine";
import { engineHarness, META } from "../helpers/engine_harness.ts";
import { initializeRequest } from "../helpers/http_helpers.ts";

const echo = {
  name: "echo",
  description: "echo",
  inputSchema: { type: "object", properties: { n: { type: "integer" } }, required: ["n"] },
  handler: ({ n }: { n: number }) => `n=${n}`,
};
const secret = { name: "secret", description: "hidden", handler: () => "secret" };

Deno.test("serverTools filters tools/list and the tools/call lookup", async () => {
  const t = engineHarness({
    tools: [echo, secret],
    serverTools: (tools) => tools.filter((x) => x.name !== "secret"),
  });
  await t.initialize();
  const list = await t.send("tools/list");
  assert.deepEqual(
    (list!.message as unknown as { result: { tools: { name: string }[] } }).result.tools.map((x) =>
      x.name
    ),
    [
      "echo",
    ],
  );
  const call = await t.send("tools/call", { name: "secret" });
  assert.deepEqual(call!.message, {
    jsonrpc: "2.0",
    id: 3,
    error: { code: -32602, message: "Unknown tool: secret", data: { name: "secret" } },
  });
});

Deno.test("invalid tool arguments: -32602 before 2025-11-25, an isError result after", async () => {
  const old = engineHarness({ tools: [echo] });
  await old.initialize("2025-06-18");
  const r1 = await old.send("tools/call", { name: "echo", arguments: { n: "x" } });
  assert.equal((r1!.message as { error: { code: number } }).error.code, -32602);
  const current = engineHarness({ tools: [echo] });
  await current.initialize("2025-11-25");
  const r2 = await current.send("tools/call", { name: "echo", arguments: { n: "x" } });
  assert.equal((r2!.message as unknown as { result: { isError: boolean } }).result.isError, true);
});

Deno.test("init: an McpError keeps its code, anything else is -32603 with a string message", async () => {
  const a = engineHarness({
    init: () => {
      throw new McpError(-32099, "nope");
    },
  });
  const r1 = await a.send("initialize", {
    protocolVersion: "2025-11-25",
    capabilities: {},
    clientInfo: { name: "c", version: "1" },
  });
  assert.deepEqual(r1!.message, {
    jsonrpc: "2.0",
    id: 1,
    error: { code: -32099, message: "nope" },
  });
  assert.equal(a.session.dialect, undefined);
  const b = engineHarness({
    init: () => {
      throw new Error("boom");
    },
  });
  const r2 = await b.send("tools/list", { _meta: META });
  assert.deepEqual(r2!.message, {
    jsonrpc: "2.0",
    id: 1,
    error: { code: -32603, message: "boom" },
  });
});

Deno.test("stateless init runs per request with that request's client info or {}", async () => {
  const seen: unknown[] = [];
  const t = engineHarness({
    tools: [echo],
    init: (info, frame) => void seen.push([info, frame.context.era]),
  });
  await t.send("tools/list", { _meta: META });
  await t.send("tools/list", {
    _meta: { ...META, "io.modelcontextprotocol/clientInfo": { name: "x", version: "2" } },
  });
  assert.deepEqual(seen, [[{}, "stateless"], [{ name: "x", version: "2" }, "stateless"]]);
});

Deno.test("handleRequest: reply, NO_REPLY, error, and next() for the default routing", async () => {
  const t = engineHarness({
    tools: [echo],
    handleRequest: (request, _frame, next) => {
      if (request.method === "custom/hello") return { hello: "world" };
      if (request.method === "custom/silent") return NO_REPLY;
      if (request.method === "custom/fail") throw new McpError(ErrorCode.INVALID_PARAMS, "bad");
      return next();
    },
  });
  await t.initialize();
  assert.deepEqual((await t.send("custom/hello"))!.message, {
    jsonrpc: "2.0",
    id: 2,
    result: { hello: "world" },
  });
  assert.equal(await t.send("custom/silent"), undefined);
  assert.equal(
    ((await t.send("custom/fail"))!.message as { error: { code: number } }).error.code,
    -32602,
  );
  const listed = await t.send("tools/list");
  assert.equal(
    (listed!.message as unknown as { result: { tools: unknown[] } }).result.tools.length,
    1,
  );
  assert.equal(
    ((await t.send("other/unknown"))!.message as { error: { code: number } }).error.code,
    -32601,
  );
});

Deno.test("a method whose capability is not declared is -32601 (404 in the stateless era)", async () => {
  const t = engineHarness({ tools: [echo] });
  const reply = await t.send("prompts/list", { _meta: META });
  assert.equal(reply!.status, 404);
  assert.equal((reply!.message as { error: { code: number } }).error.code, -32601);
  const envelope = await t.send("tools/list", {
    _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28" },
  });
  assert.equal(envelope!.status, 400);
  assert.equal((envelope!.message as { error: { code: number } }).error.code, -32602);
});

Deno.test("logs honour the level: none without a stateless logLevel, filtered by setLevel in legacy", async () => {
  const tool = {
    name: "talk",
    description: "logs",
    handler: async (_: unknown, frame: import("@anubis/core").Frame) => {
      await frame.log("debug", "d");
      await frame.log("error", "e");
      return "ok";
    },
  };
  const t = engineHarness({ tools: [tool] });
  await t.send("tools/call", { name: "talk", _meta: META });
  assert.deepEqual(t.emitted, []);
  await t.send("tools/call", {
    name: "talk",
    _meta: { ...META, "io.modelcontextprotocol/logLevel": "info" },
  });
  assert.deepEqual(t.emitted, [{
    jsonrpc: "2.0",
    method: "notifications/message",
    params: { level: "error", data: "e" },
  }]);
  t.emitted.length = 0;
  await t.initialize();
  await t.send("logging/setLevel", { level: "warning" });
  await t.send("tools/call", { name: "talk" });
  assert.deepEqual(t.emitted.map((m) => (m as { params: { level: string } }).params.level), [
    "error",
  ]);
});

Deno.test("a cancelled legacy request gets no response", async () => {
  let started!: () => void;
  const running = new Promise<void>((r) => (started = r));
  const slow = {
    name: "slow",
    description: "waits for cancellation",
    handler: (_: unknown, frame: import("@anubis/core").Frame) =>
      new Promise<string>((resolve) => {
        started();
        frame.signal.addEventListener("abort", () => resolve("too late"));
      }),
  };
  const t = engineHarness({ tools: [slow] });
  await t.initialize();
  const pending = t.engine.handle({
    jsonrpc: "2.0",
    id: "slow-1",
    method: "tools/call",
    params: { name: "slow" },
  }, t.exchange);
  await running;
  await t.engine.handle({
    jsonrpc: "2.0",
    method: "notifications/cancelled",
    params: { requestId: "slow-1" },
  }, t.exchange);
  assert.equal(await pending, undefined);
});

Deno.test("a stateless request cancelled before it asks for input gets no response", async () => {
  let started!: () => void;
  const running = new Promise<void>((r) => (started = r));
  let proceed!: () => void;
  const cancelled = new Promise<void>((r) => (proceed = r));
  const asksLate = {
    name: "asks_late",
    description: "asks for input after the client cancelled",
    handler: async (_: unknown, frame: import("@anubis/core").Frame) => {
      started();
      await cancelled;
      await frame.elicit({ message: "Name?", requestedSchema: { type: "object", properties: {} } });
      return "answered";
    },
  };
  const t = engineHarness({ tools: [asksLate] });
  const caller = new AbortController();
  const pending = t.engine.handle({
    jsonrpc: "2.0",
    id: "late-1",
    method: "tools/call",
    params: {
      name: "asks_late",
      _meta: { ...META, "io.modelcontextprotocol/clientCapabilities": { elicitation: {} } },
    },
  }, { transport: "test", emit: () => {}, signal: caller.signal });
  await running;
  caller.abort();
  proceed();
  assert.equal(await pending, undefined);
});

Deno.test("outputSchema is enforced and a bad cursor is -32602", async () => {
  const t = engineHarness({
    tools: [{
      name: "shaped",
      description: "structured",
      outputSchema: { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
      handler: () => ({ content: [], structuredContent: { n: "no" } }),
    }, echo],
    pageSize: 1,
  });
  await t.initialize();
  const call = await t.send("tools/call", { name: "shaped" });
  assert.equal((call!.message as { error: { code: number } }).error.code, -32603);
  const page = await t.send("tools/list");
  const next = (page!.message as unknown as { result: { nextCursor: string } }).result.nextCursor;
  const second = await t.send("tools/list", { cursor: next });
  assert.deepEqual(
    (second!.message as unknown as { result: { tools: { name: string }[] } }).result.tools.map((
      x,
    ) => x.name),
    [
      "echo",
    ],
  );
  const bad = await t.send("tools/list", { cursor: "forged" });
  assert.equal((bad!.message as { error: { code: number } }).error.code, -32602);
});

Deno.test("list changes reach initialized sessions; resource updates only subscribers", async () => {
  const t = engineHarness({
    tools: [echo],
    resources: [{ uri: "test://r", name: "r", read: () => "r" }],
  });
  await t.initialize();
  t.engine.server.notify.toolsListChanged();
  t.engine.server.notify.resourceUpdated("test://r");
  await t.send("resources/subscribe", { uri: "test://r" });
  t.engine.server.notify.resourceUpdated("test://r");
  await new Promise((r) => setTimeout(r, 0));
  assert.deepEqual(t.emitted, [
    { jsonrpc: "2.0", method: "notifications/tools/list_changed" },
    { jsonrpc: "2.0", method: "notifications/resources/updated", params: { uri: "test://r" } },
  ]);
  t.engine.close();
});

Deno.test("one onMessage function serves many sessions: it gets the session with each message", async () => {
  const t = engineHarness({
    tools: [{ name: "x", handler: () => "x" }],
    capabilities: { tools: { listChanged: true } },
  });
  const seen: [string | undefined, string][] = [];
  const onMessage = (message: JsonRpcMessage, session: Session) => {
    seen.push([session.id, "method" in message ? message.method : "?"]);
  };
  for (const id of ["a", "b"]) {
    const session = t.engine.createSession({ id, transport: "test", onMessage });
    const exchange = { session, transport: "test" };
    await t.engine.handle(initializeRequest(1) as unknown as JsonRpcRequest, exchange);
    await t.engine.handle({ jsonrpc: "2.0", method: "notifications/initialized" }, exchange);
  }
  t.engine.server.notify.toolsListChanged();
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.deepEqual(seen.sort(), [
    ["a", "notifications/tools/list_changed"],
    ["b", "notifications/tools/list_changed"],
  ]);
  t.engine.close();
});

Deno.test("the era a transport decided is the era served: the engine does not decide again", async () => {
  const t = engineHarness({ tools: [echo] });
  const claimed = {
    jsonrpc: "2.0" as const,
    id: 1,
    method: "tools/list",
    params: { _meta: META },
  };
  // Undecided, a stateless claim is served statelessly: the tools are listed.
  const decidedHere = await t.engine.handle(claimed, t.exchange);
  assert.ok("result" in decidedHere!.message);
  // Decided "legacy" by the transport, the same message is the session's,
  // which has not been initialized.
  const decidedLegacy = await t.engine.handle({ ...claimed, id: 2 }, t.exchange, "legacy");
  assert.deepEqual(decidedLegacy!.message, {
    jsonrpc: "2.0",
    id: 2,
    error: { code: -32600, message: "Server not initialized" },
  });
  // Decided stateless with its dialect, a message without a claim is not
  // read as the session's either.
  const dialect = t.engine.dialect("2026-07-28", "stateless")!;
  const plain = { jsonrpc: "2.0" as const, id: 3, method: "tools/list" };
  const undecided = await t.engine.handle(plain, t.exchange);
  assert.equal((undecided!.message as { error: { code: number } }).error.code, -32600);
  const decidedStateless = await t.engine.handle({ ...plain, id: 4 }, t.exchange, dialect);
  // Served statelessly, its missing `_meta` envelope is what is wrong.
  const refusal = decidedStateless!.message as { error: { code: number; data: unknown } };
  assert.equal(refusal.error.code, -32602);
  assert.deepEqual(refusal.error.data, {
    envelope: [{ path: "_meta", message: "expected an object, got undefined" }],
  });
  t.engine.close();
});
