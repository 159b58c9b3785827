/**
 * No lockout: a flood of bare `initialize` requests (handshakes never
 * finished) cannot keep a new client out, and a table full of finished
 * sessions says honestly when to retry. Real HTTP on loopback, the official
 * SDK v1 client as the second client; the flood is bounded in count.
 */

import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { initialize, initializeRequest, post, start } from "../helpers/http_helpers.ts";

Deno.test("http: while one client floods 10,000 initializes, another opens a session and calls a tool", async () => {
  // The default table of 10,000 sessions; both clients share 127.0.0.1, so the
  // per-client bound is lifted (http_per_client_test.ts tests that bound).
  const server = start({ maxSessionsPerClient: 20_000 });
  const FLOOD = 14_000;
  let sent = 0;
  const statuses = new Map<number, number>();
  const flooder = async () => {
    while (sent < FLOOD) {
      sent++;
      const response = await post(server.url, initializeRequest(sent));
      await response.body?.cancel();
      statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
    }
  };
  const flood = Promise.all(Array.from({ length: 32 }, flooder));
  const client = new Client({ name: "second", version: "1.0.0" });
  try {
    // Wait (bounded by the flood's count) until the flood has filled the table.
    while (server.handler.sessionCount < 10_000 && sent < FLOOD) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.equal(server.handler.sessionCount, 10_000, "the flood filled the table");
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    const first = await client.callTool({ name: "echo", arguments: { text: "during" } });
    assert.deepEqual(first.content, [{ type: "text", text: "echo: during" }]);
    await flood;
    // The flood only ever displaced its own unfinished handshakes.
    assert.deepEqual([...statuses.keys()], [200]);
    const after = await client.callTool({ name: "echo", arguments: { text: "after" } });
    assert.deepEqual(after.content, [{ type: "text", text: "echo: after" }]);
  } finally {
    await flood;
    await client.close();
    await server.close();
  }
});

Deno.test("http: a table full of finished sessions answers 503 with the Retry-After of its stalest session", async () => {
  const server = start({ maxSessions: 3, sessionIdleMs: 120_000 });
  try {
    for (let i = 0; i < 3; i++) await initialize(server.url);
    const refused = await post(server.url, initializeRequest(9));
    assert.equal(refused.status, 503);
    const body = await refused.json();
    assert.equal(body.id, 9);
    assert.equal(body.error.message, "Too many sessions");
    const retryAfter = Number(refused.headers.get("retry-after"));
    // The stalest session was active moments ago: it can expire in about 120 s.
    assert.ok(retryAfter > 100 && retryAfter <= 120, `Retry-After: ${retryAfter}`);
  } finally {
    await server.close();
  }
});

Deno.test("http: an unfinished handshake expires after handshakeMs; a finished session stays", async () => {
  const server = start({ handshakeMs: 50 });
  try {
    await initialize(server.url);
    const bare = await post(server.url, initializeRequest(1));
    await bare.body?.cancel();
    assert.equal(server.handler.sessionCount, 2);
    await new Promise((resolve) => setTimeout(resolve, 100));
    server.handler.sweep();
    assert.equal(server.handler.sessionCount, 1);
  } finally {
    await server.close();
  }
});
