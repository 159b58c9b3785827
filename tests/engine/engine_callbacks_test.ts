/**
 * The remaining seed 000 callbacks, in process with the real dialects.
 */

import assert from "node:assert/strict";
import { type Frame, McpError, type ServerDefinition } from "@anubis/core";
import { engineHarness, META } from "../helpers/engine_harness.ts";

/** The seed's session has an id, which `handleSessionExpired` receives. */
function harness(definition: Partial<ServerDefinition>) {
  return engineHarness(definition, { sessionId: "s-1" });
}

Deno.test("handleToolCall, handlePromptGet and handleResourceRead serve what has no handler", async () => {
  const t = harness({
    tools: [{ name: "dynamic", description: "no handler" }],
    prompts: [{ name: "p", description: "no handler" }],
    handleToolCall: (name, args) => `${name}:${JSON.stringify(args)}`,
    handlePromptGet: (name) => [{ role: "user", content: { type: "text", text: name } }],
    handleResourceRead: (uri) => {
      if (uri === "memo://1") return "one";
      throw new McpError(-32002, `Resource not found: ${uri}`, { uri });
    },
  });
  await t.initialize();
  assert.deepEqual(
    (await t.request("tools/call", { name: "dynamic", arguments: { a: 1 } })).result,
    {
      content: [{ type: "text", text: 'dynamic:{"a":1}' }],
    },
  );
  assert.deepEqual((await t.request("prompts/get", { name: "p" })).result, {
    description: "no handler",
    messages: [{ role: "user", content: { type: "text", text: "p" } }],
  });
  assert.deepEqual((await t.request("resources/read", { uri: "memo://1" })).result, {
    contents: [{ uri: "memo://1", text: "one" }],
  });
  assert.equal((await t.request("resources/read", { uri: "memo://2" })).error.code, -32002);
});

Deno.test("frame-dependent instructions win over static ones; cacheHints set the stateless cache fields", async () => {
  const t = harness({
    tools: [{ name: "x", description: "x", handler: () => "x" }],
    instructions: (frame) => `for ${frame.context.clientInfo.name ?? "anyone"}`,
    cacheHints: (
      method,
    ) => (method === "tools/list" ? { ttlMs: 60_000, scope: "public" } : undefined),
  });
  assert.equal((await t.initialize()).result.instructions, "for c");
  const listed = (await t.request("tools/list", { _meta: META })).result;
  assert.equal(listed.ttlMs, 60_000);
  assert.equal(listed.cacheScope, "public");
  const discover = (await t.request("server/discover", { _meta: META })).result;
  assert.equal(discover.instructions, "for anyone");
  assert.equal(discover.ttlMs, 0);
});

Deno.test("handleNotification receives client notifications; its errors are swallowed", async () => {
  const seen: string[] = [];
  const t = harness({
    handleNotification: (n) => {
      seen.push(n.method);
      throw new Error("ignored");
    },
  });
  await t.initialize();
  await t.engine.handle({ jsonrpc: "2.0", method: "notifications/roots/list_changed" }, t.exchange);
  assert.deepEqual(seen, ["notifications/roots/list_changed"]);
});

Deno.test("snapshot passes assigns through serializeAssigns and names what is not JSON-safe", async () => {
  const t = harness({
    init: (_info, frame) => {
      frame.assigns.userId = 7;
      frame.assigns.db = new Map();
    },
  });
  await t.initialize();
  assert.throws(() => t.engine.snapshot(t.session), /assigns\.db is not JSON-safe \(a Map\)/);
  const u = harness({
    init: (_info, frame) => {
      frame.assigns.userId = 7;
      frame.assigns.db = new Map();
    },
    serializeAssigns: (assigns) => ({ userId: assigns.userId as number }),
  });
  await u.initialize();
  const record = u.engine.snapshot(u.session);
  assert.deepEqual(record.assigns, { userId: 7 });
  assert.equal(record.protocolVersion, "2025-11-25");
});

Deno.test("restoreSession: handleSessionExpired accepts with client info, or rejects", async () => {
  const base = harness({ init: (_i, frame) => void (frame.assigns.plan = "pro") });
  await base.initialize();
  const record = base.engine.snapshot(base.session);
  const accepting = harness({
    handleSessionExpired: (id, frame) => {
      assert.equal(id, "s-1");
      assert.equal(frame.assigns.plan, "pro");
      return { clientInfo: { name: "restored", version: "2" } };
    },
  });
  const restored = await accepting.engine.restoreSession(record, { transport: "test" }, {
    transport: "test",
  });
  assert.equal(restored.dialect?.version, "2025-11-25");
  assert.deepEqual(restored.clientInfo, { name: "restored", version: "2" });
  assert.deepEqual(restored.assigns.value, { plan: "pro" });
  const rejecting = harness({
    handleSessionExpired: () => {
      throw new Error("no");
    },
  });
  await assert.rejects(
    rejecting.engine.restoreSession(record, { transport: "test" }, { transport: "test" }),
    (e) => e instanceof McpError && e.code === -32603,
  );
  assert.equal(rejecting.engine.sessions.size, 1, "only the test's own session remains");
});

Deno.test("stateless input: a missing capability is -32021 (400); several inputs are asked at once", async () => {
  const t = harness({
    tools: [{
      name: "both",
      description: "asks two things",
      handler: async (_args, frame) => {
        const [a, b] = await Promise.all([
          frame.elicit({ message: "a?", requestedSchema: { type: "object", properties: {} } }, {
            key: "a",
          }),
          frame.sample({ messages: [], maxTokens: 1 }, { key: "b" }),
        ]);
        return `${a.action}/${b.model}`;
      },
    }],
  });
  const denied = await t.engine.handle(
    { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "both", _meta: META } },
    t.exchange,
  );
  assert.equal(denied!.status, 400);
  assert.deepEqual((denied!.message as { error: unknown }).error, {
    code: -32021,
    message: "The client did not declare the capability elicitation/create needs",
    data: { requiredCapabilities: { elicitation: {} } },
  });
  const caps = {
    ...META,
    "io.modelcontextprotocol/clientCapabilities": { elicitation: {}, sampling: {} },
  };
  const round1 = (await t.request("tools/call", { name: "both", _meta: caps })).result;
  assert.equal(round1.resultType, "input_required");
  assert.deepEqual(Object.keys(round1.inputRequests), ["a", "b"]);
  const round2 = (await t.request("tools/call", {
    name: "both",
    _meta: caps,
    requestState: round1.requestState,
    inputResponses: {
      a: { action: "accept", content: {} },
      b: { role: "assistant", content: { type: "text", text: "x" }, model: "m" },
    },
  })).result;
  assert.deepEqual(round2.content, [{ type: "text", text: "accept/m" }]);
});

Deno.test("a legacy request for input the client did not declare is refused with -32600", async () => {
  const t = harness({
    tools: [{
      name: "ask",
      description: "asks the user",
      handler: async (_args, frame) => {
        const answer = await frame.elicit({
          message: "name?",
          requestedSchema: { type: "object", properties: {} },
        });
        return answer.action;
      },
    }],
  });
  await t.initialize();
  const reply = await t.request("tools/call", { name: "ask" });
  assert.deepEqual(reply, {
    jsonrpc: "2.0",
    id: 2,
    error: {
      code: -32600,
      message: "The client did not declare the capability elicitation/create needs",
      data: { requiredCapabilities: { elicitation: {} } },
    },
  });
  t.engine.close();
});

Deno.test("the initialize request's middleware assigns join the session, with or without an init hook", async () => {
  const tool = {
    name: "whoami",
    handler: (_args: Record<string, never>, frame: Frame) => String(frame.assigns.user),
  };
  for (const init of [undefined, () => {}]) {
    const t = engineHarness({ tools: [tool], init });
    const initialize = {
      jsonrpc: "2.0" as const,
      id: 100,
      method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "c", version: "1" },
      },
    };
    await t.engine.handle(initialize, { ...t.exchange, assigns: { user: "ann" } });
    const called = await t.request("tools/call", { name: "whoami" });
    assert.deepEqual(called.result.content, [{ type: "text", text: "ann" }]);
  }
});
