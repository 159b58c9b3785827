/**
 * Per-client caps over real HTTP on loopback: one handler listens on
 * 127.0.0.1 and on [::1], so the two addresses are two clients. While the
 * first opens 10,000 finished sessions as fast as it can, and holds all the
 * streams it may, the second (the official SDK v1 client) still opens a
 * session, its stream, and calls a tool.
 */

import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createHttpHandler } from "@anubis/transport-http";
import { initializeRequest, post, testServer } from "../helpers/http_helpers.ts";

function startTwice() {
  const handler = createHttpHandler(testServer(), { keepAliveMs: 0 });
  const v4 = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, handler);
  const v6 = Deno.serve({ hostname: "::1", port: 0, onListen() {} }, handler);
  return {
    handler,
    first: `http://127.0.0.1:${v4.addr.port}/mcp`,
    second: `http://[::1]:${v6.addr.port}/mcp`,
    async close() {
      handler.close();
      await Promise.all([v4.shutdown(), v6.shutdown()]);
    },
  };
}

/** A finished handshake: initialize, then notifications/initialized. */
async function handshake(url: string, id: number): Promise<{ status: number; session?: string }> {
  const response = await post(url, initializeRequest(id));
  await response.body?.cancel();
  const session = response.headers.get("mcp-session-id") ?? undefined;
  if (response.status !== 200 || !session) return { status: response.status };
  const done = await post(url, { jsonrpc: "2.0", method: "notifications/initialized" }, {
    "mcp-session-id": session,
  });
  await done.body?.cancel();
  return { status: 200, session };
}

Deno.test("http per client: while one address opens 10,000 finished sessions, another opens one and calls a tool", async () => {
  const server = startTwice();
  const FLOOD = 10_000;
  let sent = 0;
  const statuses = new Map<number, number>();
  const sessions: string[] = [];
  const flooder = async () => {
    while (sent < FLOOD) {
      const { status, session } = await handshake(server.first, ++sent);
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      if (session) sessions.push(session);
    }
  };
  const flood = Promise.all(Array.from({ length: 16 }, flooder));
  const client = new Client({ name: "second", version: "1.0.0" });
  try {
    // Bounded by the flood's count: wait until the first client holds all it may.
    while (server.handler.sessionCount < 1_000 && sent < FLOOD) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await client.connect(new StreamableHTTPClientTransport(new URL(server.second)));
    const during = await client.callTool({ name: "echo", arguments: { text: "during" } });
    assert.deepEqual(during.content, [{ type: "text", text: "echo: during" }]);
    await flood;
    // The first client holds its 1,000; a handshake still unfinished when its
    // bound was reached made room for another of its own.
    assert.deepEqual([...statuses.keys()].sort(), [200, 429], JSON.stringify([...statuses]));
    assert.ok(statuses.get(429)! > FLOOD - 1_100, JSON.stringify([...statuses]));
    assert.equal(server.handler.sessionCount, 1_000 + 1);
    const after = await client.callTool({ name: "echo", arguments: { text: "after" } });
    assert.deepEqual(after.content, [{ type: "text", text: "echo: after" }]);
    // The refusal says it is this client's bound, with a Retry-After.
    const refused = await post(server.first, initializeRequest(1));
    assert.equal(refused.status, 429);
    assert.ok(Number(refused.headers.get("retry-after")) >= 1);
    const body = await refused.json();
    assert.equal(body.id, 1);
    assert.equal(body.error.message, "Too many sessions for this client");
  } finally {
    await flood;
    await client.close();
    await server.close();
  }
});

Deno.test("http per client: one address holds at most 100 streams; another still opens its own", async () => {
  const server = startTwice();
  const open: Response[] = [];
  try {
    const get = (url: string, session: string) =>
      fetch(url, { headers: { accept: "text/event-stream", "mcp-session-id": session } });
    for (let i = 0; i < 100; i++) {
      const { session } = await handshake(server.first, i);
      const stream = await get(server.first, session!);
      assert.equal(stream.status, 200);
      open.push(stream);
    }
    const { session: more } = await handshake(server.first, 100);
    const refused = await get(server.first, more!);
    assert.equal(refused.status, 429);
    assert.equal((await refused.json()).error.message, "Too many open streams for this client");
    const { session: other } = await handshake(server.second, 101);
    const stream = await get(server.second, other!);
    assert.equal(stream.status, 200);
    open.push(stream);
    assert.equal(server.handler.openStreams, 101);
    // A stream given back is a slot the client may take again.
    await open.shift()!.body?.cancel();
    let again: Response | undefined;
    for (let i = 0; i < 100 && again?.status !== 200; i++) {
      await again?.body?.cancel();
      again = await get(server.first, more!);
    }
    assert.equal(again?.status, 200);
    open.push(again!);
  } finally {
    for (const response of open) await response.body?.cancel();
    await server.close();
  }
});
