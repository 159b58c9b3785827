/**
 * Two handlers sharing KV stores, as two instances behind a load balancer:
 * a client that leaves one instance's GET stream for another's must not lose
 * its events when the first instance's grace period ends, and what the client
 * sets at one instance holds at the other.
 */

import assert from "node:assert/strict";
import { KvEventStore } from "@anubis/event-store-kv";
import { KvSessionStore } from "@anubis/session-kv";
import { initialize, post, SseReader, start, type TestServer } from "../helpers/http_helpers.ts";

const VERSION = "2025-11-25";

function open(url: string, sessionId: string, lastEventId?: string): Promise<Response> {
  const headers: Record<string, string> = {
    accept: "text/event-stream",
    "mcp-session-id": sessionId,
    "mcp-protocol-version": VERSION,
  };
  if (lastEventId) headers["last-event-id"] = lastEventId;
  return fetch(url, { headers });
}

async function request(
  url: string,
  sessionId: string,
  id: number,
  method: string,
  params: Record<string, unknown> = {},
): Promise<void> {
  const response = await post(url, { jsonrpc: "2.0", id, method, params }, {
    "mcp-session-id": sessionId,
    "mcp-protocol-version": VERSION,
  });
  assert.equal(response.status, 200);
  await response.body?.cancel();
}

function changeTools(url: string, sessionId: string, id: number): Promise<void> {
  return request(url, sessionId, id, "tools/call", { name: "change_tools", arguments: {} });
}

/** Two handlers on one in-memory KV database with both stores. */
async function withTwoHandlers(
  body: (a: TestServer, b: TestServer) => Promise<void>,
): Promise<void> {
  const kv = await Deno.openKv(":memory:");
  const eventStore = new KvEventStore(kv, { pollIntervalMs: 20 });
  const sessionStore = new KvSessionStore(kv);
  const options = { eventStore, sessionStore, streamGraceMs: 20 };
  const a = start(options);
  const b = start(options);
  try {
    await body(a, b);
  } finally {
    await a.close();
    await b.close();
    kv.close();
  }
}

async function nextData(reader: SseReader) {
  for (let event = await reader.next(); event; event = await reader.next()) {
    if (event.data) return event;
  }
  throw new Error("stream ended");
}

Deno.test("instances: a stream moved to another instance outlives the first one's grace period", async () => {
  await withTwoHandlers(async (a, b) => {
    const sessionId = await initialize(a.url, VERSION);
    const first = new SseReader(await open(a.url, sessionId));
    assert.equal((await first.next())?.data, ""); // priming
    await changeTools(a.url, sessionId, 1);
    assert.equal((await nextData(first)).id, "1");
    await first.cancel(); // the client leaves A…

    // …and resumes on B; A's grace period for its dropped stream runs out meanwhile.
    const moved = new SseReader(await open(b.url, sessionId, "1"));
    assert.equal((await moved.next())?.id, "1");
    await new Promise((resolve) => setTimeout(resolve, 200));
    await changeTools(b.url, sessionId, 2);
    const next = await nextData(moved);
    assert.equal(next.id, "2");
    assert.equal(JSON.parse(next.data!).method, "notifications/tools/list_changed");
    await moved.cancel();
  });
});

Deno.test("instances: a subscription made at one instance holds at another that restored the session earlier", async () => {
  await withTwoHandlers(async (a, b) => {
    const sessionId = await initialize(a.url, VERSION);
    await request(b.url, sessionId, 1, "ping"); // B restores the session now
    await request(a.url, sessionId, 2, "resources/subscribe", { uri: "test://r" });
    const stream = new SseReader(await open(a.url, sessionId));
    assert.equal((await stream.next())?.data, ""); // priming
    await request(b.url, sessionId, 3, "ping"); // the client's next request lands on B
    b.handler.engine.server.notify.resourceUpdated("test://r");
    b.handler.engine.server.notify.toolsListChanged(); // a marker after it
    const first = JSON.parse((await nextData(stream)).data!);
    assert.deepEqual(first, {
      jsonrpc: "2.0",
      method: "notifications/resources/updated",
      params: { uri: "test://r" },
    });
    await stream.cancel();
  });
});
