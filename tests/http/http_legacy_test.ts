/**
 * End-to-end tests of the legacy era on Streamable HTTP: the real handler on
 * Deno.serve, raw fetch.
 */

import assert from "node:assert/strict";
import { initialize, initializeRequest, post, SseReader, start } from "../helpers/http_helpers.ts";

const call = (id: number, name: string, args: Record<string, unknown> = {}, meta?: object) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, arguments: args, ...(meta ? { _meta: meta } : {}) },
});

Deno.test("http legacy: initialize, initialized, tools/call, GET stream, DELETE, 404 after", async () => {
  const server = start();
  try {
    const init = await post(server.url, {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "raw", version: "0" },
      },
    }, { "mcp-session-id": "client-chosen" });
    assert.equal(init.status, 200);
    assert.equal(init.headers.get("content-type"), "application/json");
    const sessionId = init.headers.get("mcp-session-id")!;
    assert.match(sessionId, /^[0-9a-f]{32}$/);
    assert.notEqual(sessionId, "client-chosen");
    const body = await init.json();
    assert.equal(body.result.protocolVersion, "2025-06-18");
    const session = { "mcp-session-id": sessionId, "mcp-protocol-version": "2025-06-18" };

    const initialized = await post(server.url, {
      jsonrpc: "2.0",
      method: "notifications/initialized",
    }, session);
    assert.equal(initialized.status, 202);
    assert.equal(await initialized.text(), "");

    const echo = await post(server.url, call(2, "echo", { text: "hi" }), session);
    assert.equal(echo.status, 200);
    assert.deepEqual(await echo.json(), {
      jsonrpc: "2.0",
      id: 2,
      result: { content: [{ type: "text", text: "echo: hi" }] },
    });

    // The standalone stream carries unrelated messages (a list change).
    const get = await fetch(server.url, {
      headers: { accept: "text/event-stream", ...session },
    });
    assert.equal(get.status, 200);
    assert.equal(get.headers.get("content-type"), "text/event-stream");
    const stream = new SseReader(get);
    const change = await post(server.url, call(3, "change_tools"), session);
    assert.equal((await change.json()).result.content[0].text, "changed");
    assert.deepEqual(await stream.message(), {
      jsonrpc: "2.0",
      method: "notifications/tools/list_changed",
    });

    const del = await fetch(server.url, { method: "DELETE", headers: session });
    assert.equal(del.status, 200);
    await del.body?.cancel();
    assert.equal(await stream.next(), undefined, "DELETE closes the standalone stream");

    const after = await post(server.url, call(4, "echo", { text: "x" }), session);
    assert.equal(after.status, 404);
    assert.deepEqual(await after.json(), {
      jsonrpc: "2.0",
      id: 4,
      error: { code: -32001, message: "Session not found" },
    });
    assert.equal(server.handler.sessionCount, 0);
  } finally {
    await server.close();
  }
});

Deno.test("http legacy: a request that emits progress is upgraded to SSE", async () => {
  const server = start();
  try {
    const sessionId = await initialize(server.url);
    const response = await post(server.url, call(5, "count", {}, { progressToken: "t" }), {
      "mcp-session-id": sessionId,
    });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get("content-type"), "text/event-stream");
    const messages = await new SseReader(response).rest();
    assert.deepEqual(messages.map((m) => (m.params as { progress?: number })?.progress), [
      1,
      2,
      3,
      undefined,
    ]);
    assert.deepEqual(messages[3], {
      jsonrpc: "2.0",
      id: 5,
      result: { content: [{ type: "text", text: "counted" }] },
    });
  } finally {
    await server.close();
  }
});

Deno.test("http legacy: elicitation goes out on the POST stream and the POSTed answer completes it", async () => {
  const server = start();
  try {
    const sessionId = await initialize(server.url, "2025-11-25", { elicitation: {} });
    const headers = { "mcp-session-id": sessionId };
    const response = await post(server.url, call(6, "ask"), headers);
    assert.equal(response.headers.get("content-type"), "text/event-stream");
    const reader = new SseReader(response);
    const elicit = await reader.message();
    assert.equal(elicit.method, "elicitation/create");
    assert.equal((elicit.params as { message: string }).message, "Name?");
    const answer = await post(server.url, {
      jsonrpc: "2.0",
      id: elicit.id,
      result: { action: "accept", content: { name: "Ada" } },
    }, headers);
    assert.equal(answer.status, 202);
    await answer.body?.cancel();
    assert.deepEqual(await reader.rest(), [{
      jsonrpc: "2.0",
      id: 6,
      result: { content: [{ type: "text", text: "Hello, Ada!" }] },
    }]);
  } finally {
    await server.close();
  }
});

Deno.test("http legacy: session and header errors", async (t) => {
  const server = start();
  try {
    const sessionId = await initialize(server.url);
    await t.step("missing session id is 400 with the id echoed", async () => {
      const response = await post(server.url, call(7, "echo"));
      assert.equal(response.status, 400);
      const body = await response.json();
      assert.equal(body.id, 7);
      assert.equal(body.error.code, -32600);
    });
    await t.step("unknown session id is 404", async () => {
      const response = await post(server.url, call(8, "echo"), { "mcp-session-id": "nope" });
      assert.equal(response.status, 404);
      assert.equal((await response.json()).id, 8);
    });
    await t.step("a protocol version header other than the session's is 400", async () => {
      const response = await post(server.url, call(9, "echo"), {
        "mcp-session-id": sessionId,
        "mcp-protocol-version": "2025-03-26",
      });
      assert.equal(response.status, 400);
      assert.equal((await response.json()).id, 9);
    });
    await t.step("POST accepting only JSON is 406", async () => {
      const response = await post(server.url, call(10, "echo"), {
        "mcp-session-id": sessionId,
        accept: "application/json",
      });
      assert.equal(response.status, 406);
      assert.equal((await response.json()).id, 10);
    });
    await t.step("GET without text/event-stream in Accept is 406", async () => {
      const response = await fetch(server.url, {
        headers: { "mcp-session-id": sessionId, accept: "application/json" },
      });
      assert.equal(response.status, 406);
      await response.body?.cancel();
    });
    await t.step("GET and DELETE without a session are 400, with an unknown one 404", async () => {
      for (const method of ["GET", "DELETE"]) {
        const missing = await fetch(server.url, { method });
        assert.equal(missing.status, 400);
        await missing.body?.cancel();
        const unknown = await fetch(server.url, { method, headers: { "mcp-session-id": "x" } });
        assert.equal(unknown.status, 404);
        await unknown.body?.cancel();
      }
    });
    await t.step("a second initialize makes a new session", async () => {
      const other = await initialize(server.url);
      assert.notEqual(other, sessionId);
      assert.equal(server.handler.sessionCount, 2);
    });
    await t.step("a failed initialize is 400 and leaves no session", async () => {
      const response = await post(server.url, {
        jsonrpc: "2.0",
        id: 11,
        method: "initialize",
        params: { capabilities: "wrong" },
      });
      assert.equal(response.status, 400);
      assert.equal(response.headers.get("mcp-session-id"), null);
      assert.equal((await response.json()).error.code, -32602);
      assert.equal(server.handler.sessionCount, 2);
    });
    await t.step("a handler's exception is -32603 without a stack trace", async () => {
      const response = await post(server.url, {
        jsonrpc: "2.0",
        id: 12,
        method: "prompts/get",
        params: { name: "crash" },
      }, { "mcp-session-id": sessionId });
      const text = await response.text();
      assert.deepEqual(JSON.parse(text), {
        jsonrpc: "2.0",
        id: 12,
        error: { code: -32603, message: "prompt failed" },
      });
      const tool = await post(server.url, call(13, "crash"), { "mcp-session-id": sessionId });
      const result = await tool.json();
      assert.equal(result.result.isError, true);
      assert.ok(!JSON.stringify(result).includes(".ts:"));
    });
  } finally {
    await server.close();
  }
});

Deno.test("http legacy: batches only on 2025-03-26 sessions", async () => {
  const server = start();
  try {
    const old = await initialize(server.url, "2025-03-26");
    const batch = [
      { jsonrpc: "2.0", id: 1, method: "ping" },
      { jsonrpc: "2.0", method: "notifications/initialized" },
      {
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "echo", arguments: { text: "b" } },
      },
      { jsonrpc: "2.0", id: 3 },
    ];
    const ok = await post(server.url, batch, { "mcp-session-id": old });
    assert.equal(ok.status, 200);
    const responses = await ok.json();
    assert.deepEqual(responses.map((r: { id: unknown }) => r.id).sort(), [1, 2, 3]);
    assert.equal(responses.find((r: { id: number }) => r.id === 3).error.code, -32600);

    const onlyNotes = await post(server.url, [{
      jsonrpc: "2.0",
      method: "notifications/initialized",
    }], {
      "mcp-session-id": old,
    });
    assert.equal(onlyNotes.status, 202);
    await onlyNotes.body?.cancel();

    const modern = await initialize(server.url, "2025-11-25");
    const refused = await post(server.url, batch, { "mcp-session-id": modern });
    assert.equal(refused.status, 400);
    assert.equal((await refused.json()).error.code, -32600);

    const withInit = await post(server.url, [{
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {},
    }], { "mcp-session-id": old });
    assert.equal(withInit.status, 400);
    await withInit.body?.cancel();

    const empty = await post(server.url, [], { "mcp-session-id": old });
    assert.equal(empty.status, 400);
    assert.equal((await empty.json()).error.code, -32600);
  } finally {
    await server.close();
  }
});

Deno.test("http legacy: the session limit refuses initialize with 503", async () => {
  const server = start({ maxSessions: 1 });
  try {
    await initialize(server.url);
    const response = await post(server.url, initializeRequest(1));
    assert.equal(response.status, 503);
    assert.equal((await response.json()).id, 1);
  } finally {
    await server.close();
  }
});
