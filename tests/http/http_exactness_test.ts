/**
 * Exact answers to hostile-but-well-formed input over real HTTP on loopback:
 * `initialize` on an existing session, an `init` error JSON cannot encode, a
 * 100,000-deep value in `initialize` capabilities, and a tool name that is no
 * string in a stateless `tools/call`. Each gets its spec-correct JSON-RPC error
 * with the request id, and the server keeps serving.
 */

import assert from "node:assert/strict";
import { defineServer, McpError } from "@anubis/core";
import {
  headers2026,
  initialize,
  initializeRequest,
  post,
  request2026,
  start,
} from "../helpers/http_helpers.ts";

/** Runs `body` with console.error captured, returning what was written. */
async function capturingStderr(body: () => Promise<void>): Promise<string[]> {
  const lines: string[] = [];
  const original = console.error;
  console.error = (...args: unknown[]) => lines.push(args.map(String).join(" "));
  try {
    await body();
  } finally {
    console.error = original;
  }
  return lines;
}

Deno.test("http exactness: initialize with an existing Mcp-Session-Id is -32600 (400), and mints no session", async () => {
  const server = start();
  try {
    const session = await initialize(server.url);
    assert.equal(server.handler.sessionCount, 1);
    const again = await post(server.url, initializeRequest(7), { "mcp-session-id": session });
    assert.equal(again.status, 400);
    assert.equal(again.headers.get("mcp-session-id"), null);
    const body = await again.json();
    assert.equal(body.id, 7);
    assert.equal(body.error.code, -32600);
    assert.equal(server.handler.sessionCount, 1);
    // An id naming no session is ignored: a new session is minted, as without the header.
    const stale = await post(server.url, initializeRequest(8), { "mcp-session-id": "gone" });
    assert.equal(stale.status, 200);
    await stale.body?.cancel();
    assert.notEqual(stale.headers.get("mcp-session-id"), "gone");
    assert.equal(server.handler.sessionCount, 2);
    // The existing session still serves.
    const ping = await post(server.url, { jsonrpc: "2.0", id: 9, method: "ping" }, {
      "mcp-session-id": session,
    });
    assert.deepEqual(await ping.json(), { jsonrpc: "2.0", id: 9, result: {} });
  } finally {
    await server.close();
  }
});

Deno.test("http exactness: an init error whose data JSON cannot encode is -32603 for the request id", async () => {
  const server = start(
    {},
    defineServer({
      name: "bad-init",
      version: "1.0.0",
      init: () => {
        throw new McpError(-32000, "refused", { n: 1n });
      },
    }),
  );
  try {
    const errors = await capturingStderr(async () => {
      for (const version of ["2025-03-26", "2025-06-18", "2025-11-25"]) {
        const response = await post(server.url, initializeRequest(11, version));
        assert.equal(response.status, 400);
        assert.equal(response.headers.get("mcp-session-id"), null);
        const body = await response.json();
        assert.equal(body.id, 11);
        assert.equal(body.error.code, -32603);
        assert.match(body.error.message, /could not be encoded as JSON/);
      }
    });
    assert.equal(server.handler.sessionCount, 0);
    assert.equal(errors.length, 3, errors.join("\n"));
    for (const line of errors) assert.match(line, /the response to 11 could not be encoded/);
  } finally {
    await server.close();
  }
});

Deno.test("http exactness: a 100,000-deep value in initialize capabilities is -32602, with nothing on stderr", async () => {
  const server = start();
  try {
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    const errors = await capturingStderr(async () => {
      for (const where of ["capabilities", "clientInfo"]) {
        const request = initializeRequest(12);
        const params = request.params as Record<string, Record<string, unknown>>;
        params[where] = { ...params[where], experimental: { deep } };
        const response = await post(server.url, request);
        assert.equal(response.status, 400);
        const body = await response.json();
        assert.equal(body.id, 12);
        assert.equal(body.error.code, -32602);
        // 100,000 levels are also more than a session may retain (64 KiB), which
        // the transport checks before the engine checks the depth.
        assert.match(
          body.error.message,
          new RegExp(
            `${where} nests deeper than|capabilities and clientInfo of an initialize may hold at most`,
          ),
        );
      }
    });
    assert.deepEqual(errors, []);
    assert.equal(server.handler.sessionCount, 0);
    // Ordinary nesting is still accepted.
    await initialize(server.url, "2025-11-25", { experimental: { a: { b: { c: { d: 1 } } } } });
  } finally {
    await server.close();
  }
});

Deno.test("http exactness: a non-string tool name in a stateless tools/call is a -32602 type error", async () => {
  const server = start();
  try {
    for (const [id, name, header] of [[13, 5, "5"], [14, null, "null"], [15, undefined, "x"]]) {
      const response = await post(
        server.url,
        request2026(id as number, "tools/call", { name, arguments: {} }),
        headers2026("tools/call", header as string),
      );
      assert.equal(response.status, 400);
      const body = await response.json();
      assert.equal(body.id, id);
      assert.equal(body.error.code, -32602, JSON.stringify(body));
      assert.equal(body.error.message, "Invalid params: name must be a string");
    }
    const fine = await post(
      server.url,
      request2026(16, "tools/call", { name: "echo", arguments: { text: "ok" } }),
      headers2026("tools/call", "echo"),
    );
    assert.equal((await fine.json()).result.content[0].text, "echo: ok");
  } finally {
    await server.close();
  }
});
