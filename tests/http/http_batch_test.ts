/**
 * Bounded batches (2025-03-26) over real HTTP on loopback: a cap on entries
 * answered by one -32600, a cap on the size of the answer that still answers
 * every id, and a batch's pending work cancelled when its client leaves.
 */

import assert from "node:assert/strict";
import {
  initialize,
  JSON_HEADERS,
  observed,
  post,
  SseReader,
  start,
  until,
} from "../helpers/http_helpers.ts";

const ping = (id: number) => ({ jsonrpc: "2.0", id, method: "ping" });
const call = (id: number, name: string, args: Record<string, unknown> = {}, token?: string) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, arguments: args, ...(token ? { _meta: { progressToken: token } } : {}) },
});

Deno.test("http batch: beyond maxBatchEntries one -32600 (400) answers the whole batch", async () => {
  const server = start();
  try {
    const session = { "mcp-session-id": await initialize(server.url, "2025-03-26") };
    const full = await post(server.url, Array.from({ length: 1000 }, (_, i) => ping(i)), session);
    assert.equal(full.status, 200);
    assert.equal((await full.json()).length, 1000);
    for (const body of [Array.from({ length: 1001 }, (_, i) => ping(i)), Array(100_000).fill(1)]) {
      const refused = await post(server.url, body, session);
      assert.equal(refused.status, 400);
      assert.deepEqual(await refused.json(), {
        jsonrpc: "2.0",
        id: null,
        error: {
          code: -32600,
          message:
            `Invalid Request: a JSON-RPC batch holds at most 1000 entries (this one has ${body.length})`,
        },
      });
    }
  } finally {
    await server.close();
  }
});

Deno.test("http batch: the entry cap and the answer cap are options", async () => {
  const server = start({ maxBatchEntries: 3, maxBatchAnswerBytes: 600 });
  try {
    const session = { "mcp-session-id": await initialize(server.url, "2025-03-26") };
    const refused = await post(server.url, [ping(1), ping(2), ping(3), ping(4)], session);
    assert.equal(refused.status, 400);
    assert.match((await refused.json()).error.message, /at most 3 entries/);
    const text = "y".repeat(150);
    const answer = await post(
      server.url,
      [1, 2, 3].map((id) => call(id, "echo", { text })),
      session,
    );
    assert.equal(answer.status, 200);
    const body = await answer.text();
    const replies = JSON.parse(body) as Record<string, Record<string, unknown>>[];
    assert.deepEqual(replies.map((m) => m.id), [1, 2, 3]);
    assert.deepEqual(replies.map((m) => m.error?.code ?? "ok"), ["ok", "ok", -32603]);
    assert.match(String(replies[2].error.message), /exceeds 600 bytes/);
    assert.ok(body.length < 600 + 200, `${body.length} bytes`);
  } finally {
    await server.close();
  }
});

Deno.test("http batch: a client that leaves cancels the batch's pending work (JSON and SSE answers)", async () => {
  // Keep-alive comments every 100 ms: on Deno a client that left is found by a failed write.
  const server = start({ keepAliveMs: 100 });
  try {
    const session = { "mcp-session-id": await initialize(server.url, "2025-03-26") };
    const N = 50;
    // No progress token: the answer would be JSON after the work, and SSE once it takes a while.
    const started = observed.started, cancelled = observed.cancelled;
    const leaving = new AbortController();
    const pending = fetch(server.url, {
      method: "POST",
      headers: { ...JSON_HEADERS, ...session },
      body: JSON.stringify(Array.from({ length: N }, (_, i) => call(i, "wait_for_cancel"))),
      signal: leaving.signal,
    }).catch((error) => error);
    await until(() => observed.started === started + N);
    leaving.abort();
    await pending;
    await until(() => observed.cancelled === cancelled + N);

    // With progress tokens the answer is an SSE stream; the client reads one event and leaves.
    const streamed = await post(
      server.url,
      Array.from({ length: N }, (_, i) => call(i, "wait_for_cancel", {}, `t${i}`)),
      session,
    );
    assert.equal(streamed.headers.get("content-type"), "text/event-stream");
    const reader = new SseReader(streamed);
    assert.equal((await reader.message()).method, "notifications/progress");
    await until(() => observed.started === started + 2 * N);
    await reader.cancel();
    await until(() => observed.cancelled === cancelled + 2 * N);

    // A batch answered within the keep-alive interval is still plain JSON.
    const quick = await post(server.url, [ping(97), ping(98)], session);
    assert.equal(quick.headers.get("content-type"), "application/json");
    assert.deepEqual((await quick.json()).map((m: { id: number }) => m.id), [97, 98]);
    // The session serves on.
    const after = await post(server.url, ping(99), session);
    assert.deepEqual(await after.json(), { jsonrpc: "2.0", id: 99, result: {} });
  } finally {
    await server.close();
  }
});
