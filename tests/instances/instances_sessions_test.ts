/**
 * Two handlers on one KV file, as two instances behind a load balancer: what
 * a session restored at the other instance answers when its restore fails or
 * the table is full, a session held only by its GET stream, one standalone
 * stream per session across instances, and the client's answers to
 * server-to-client requests reaching the instance that asked.
 */

import assert from "node:assert/strict";
import { defineServer, defineTool, type McpServer } from "@anubis/core";
import { MemoryEventStore } from "@anubis/event-store-memory";
import { KvEventStore, KvNotificationBus } from "@anubis/event-store-kv";
import { KvSessionStore } from "@anubis/session-kv";
import type { HttpHandlerOptions, SessionBusMessage } from "@anubis/transport-http";
import {
  initialize,
  post,
  SseReader,
  start,
  type TestServer,
  testServer,
  until,
} from "../helpers/http_helpers.ts";

const VERSION = "2025-11-25";

interface Pair {
  a: TestServer;
  b: TestServer;
  /** Every message on the session bus, in the bus's order (seen by a third party). */
  signals: SessionBusMessage[];
}

/**
 * Two handlers, each with its own handle on one fresh KV file, both stores
 * and a session bus on it (as `cli serve` wires them).
 */
async function withTwoHandlers(
  options: { a?: HttpHandlerOptions; b?: HttpHandlerOptions; server?: () => McpServer },
  body: (pair: Pair) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "anubis-sessions-" });
  const kvs: Deno.Kv[] = [];
  const buses: KvNotificationBus<SessionBusMessage>[] = [];
  const servers: TestServer[] = [];
  const signals: SessionBusMessage[] = [];
  /** A handle on the KV file and a started session bus on it. */
  const join = async () => {
    const kv = await Deno.openKv(`${dir}/s.kv`);
    kvs.push(kv);
    const bus = new KvNotificationBus<SessionBusMessage>(kv, {
      channel: "sessions",
      pollIntervalMs: 20,
    });
    buses.push(bus);
    await bus.start();
    return { kv, bus };
  };
  try {
    (await join()).bus.subscribe((signal) => void signals.push(signal));
    for (const own of [options.a, options.b]) {
      const { kv, bus: sessionBus } = await join();
      servers.push(start({
        eventStore: new KvEventStore(kv, { pollIntervalMs: 20 }),
        sessionStore: new KvSessionStore(kv),
        sessionBus,
        ...own,
      }, (options.server ?? testServer)()));
    }
    await body({ a: servers[0], b: servers[1], signals });
  } finally {
    for (const server of servers) await server.close();
    for (const bus of buses) await bus.close();
    for (const kv of kvs) kv.close();
    await Deno.remove(dir, { recursive: true });
  }
}

/** A raw legacy POST of one request on a session. */
function call(url: string, sessionId: string, id: number, method: string, params = {}) {
  return post(url, { jsonrpc: "2.0", id, method, params }, {
    "mcp-session-id": sessionId,
    "mcp-protocol-version": VERSION,
  });
}

/** Opens the session's standalone stream. */
function open(url: string, sessionId: string): Promise<Response> {
  return fetch(url, {
    headers: {
      accept: "text/event-stream",
      "mcp-session-id": sessionId,
      "mcp-protocol-version": VERSION,
    },
  });
}

/** Opens the session's standalone stream and reads its priming event. */
async function openPrimed(url: string, sessionId: string): Promise<SseReader> {
  const stream = new SseReader(await open(url, sessionId));
  assert.equal((await stream.next())?.data, ""); // priming
  return stream;
}

/** The test server, refusing to restore sessions (seed 000 `handle_session_expired`). */
function refusingServer(): McpServer {
  const server = testServer();
  return defineServer({
    ...server.definition,
    handleSessionExpired: () => {
      throw new Error("recovery refused");
    },
  });
}

Deno.test("instances: a session whose restore is refused gets an internal error, not 404", async () => {
  await withTwoHandlers({ server: refusingServer }, async ({ a, b }) => {
    const sessionId = await initialize(a.url, VERSION);
    const refused = await call(b.url, sessionId, 7, "ping");
    assert.equal(refused.status, 500);
    const body = await refused.json();
    assert.equal(body.id, 7);
    assert.equal(body.error.code, -32603);
    assert.equal(b.handler.sessionCount, 0);
    // B goes on serving: an unknown session is still 404, the session still lives at A.
    const unknown = await call(b.url, "no-such-session", 8, "ping");
    assert.equal(unknown.status, 404);
    assert.equal((await unknown.json()).error.code, -32001);
    const live = await call(a.url, sessionId, 9, "ping");
    assert.equal(live.status, 200);
    await live.body?.cancel();
  });
});

Deno.test("instances: restoring a session into a full table is 503, as creating one", async () => {
  await withTwoHandlers({ b: { maxSessions: 1, sessionIdleMs: 120_000 } }, async ({ a, b }) => {
    const sessionId = await initialize(a.url, VERSION);
    await initialize(b.url, VERSION); // B is full now
    const full = await call(b.url, sessionId, 7, "ping");
    assert.equal(full.status, 503);
    // Retry-After says when B's one session can expire: within its idle time.
    const retryAfter = Number(full.headers.get("retry-after"));
    assert.ok(retryAfter >= 1 && retryAfter <= 120, `retry-after ${retryAfter}`);
    const body = await full.json();
    assert.equal(body.id, 7);
    assert.equal(body.error.code, -32603);
    const unknown = await call(b.url, "no-such-session", 8, "ping");
    assert.equal(unknown.status, 404);
    await unknown.body?.cancel();
  });
});

Deno.test("instances: a session held only by its GET stream outlives sessionIdleMs in the store", async () => {
  // The store records touches rather than the test timing them: a stalled
  // machine makes the touches late, which the assertions do not mind.
  const touches: { at: number; ttlMs: number }[] = [];
  const touch = KvSessionStore.prototype.touch;
  KvSessionStore.prototype.touch = function (id, ttlMs) {
    touches.push({ at: performance.now(), ttlMs });
    return touch.call(this, id, ttlMs);
  };
  const idle = { sessionIdleMs: 1_200 };
  try {
    await withTwoHandlers({ a: idle, b: idle }, async ({ a, b }) => {
      const sessionId = await initialize(a.url, VERSION);
      const opened = performance.now();
      const stream = await openPrimed(a.url, sessionId);
      // Only the stream is active: it touches the record every quarter of the
      // idle time, past the idle time and on.
      await within(20_000, until(() => touches.at(-1)!.at - opened > 1_500), "touches");
      assert.ok(touches.length >= 3, `${touches.length} touches`);
      assert.ok(touches.every((t) => t.ttlMs === 1_200));
      const again = await call(a.url, sessionId, 1, "ping");
      assert.equal(again.status, 200);
      await again.body?.cancel();
      assert.equal(a.handler.sessionCount, 1);
      assert.equal(a.handler.openStreams, 1);
      // The record, touched moments ago, is alive for the other instance too.
      const there = await call(b.url, sessionId, 2, "ping");
      assert.equal(there.status, 200);
      await there.body?.cancel();
      await stream.cancel();
    });
  } finally {
    KvSessionStore.prototype.touch = touch;
  }
});

/** Resolves with `promise`, or rejects after `ms` (what would otherwise hang). */
function within<T>(ms: number, promise: Promise<T>, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout>;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

Deno.test("instances: an elicitation answer posted to the other instance reaches the one that asked", async () => {
  await withTwoHandlers({}, async ({ a, b }) => {
    const sessionId = await initialize(a.url, VERSION, { elicitation: {} });
    const asking = await call(a.url, sessionId, 1, "tools/call", { name: "ask", arguments: {} });
    assert.equal(asking.headers.get("content-type"), "text/event-stream");
    const stream = new SseReader(asking);
    let request = await stream.message();
    while (request.method !== "elicitation/create") request = await stream.message();
    // The load balancer sends the client's answer to B, which did not ask.
    const answer = await post(b.url, {
      jsonrpc: "2.0",
      id: request.id,
      result: { action: "accept", content: { name: "Alice" } },
    }, { "mcp-session-id": sessionId, "mcp-protocol-version": VERSION });
    assert.equal(answer.status, 202);
    await answer.body?.cancel();
    const result = await within(3_000, stream.message(), "the tool's result at A");
    assert.deepEqual(result, {
      jsonrpc: "2.0",
      id: 1,
      result: { content: [{ type: "text", text: "Hello, Alice!" }] },
    });
    await stream.cancel();
  });
});

Deno.test("instances: a GET stream opened at B closes the session's older one at A", async () => {
  await withTwoHandlers({}, async ({ a, b }) => {
    const sessionId = await initialize(a.url, VERSION);
    const first = await openPrimed(a.url, sessionId);
    const second = await openPrimed(b.url, sessionId);
    // A's stream ends (the client has one standalone stream, now at B)…
    assert.deepEqual(await within(3_000, first.rest(), "A's stream closing"), []);
    assert.equal(a.handler.openStreams, 0);
    // …and a change goes out once, on B's.
    const changed = await call(a.url, sessionId, 1, "tools/call", {
      name: "change_tools",
      arguments: {},
    });
    await changed.body?.cancel();
    assert.equal((await second.message()).method, "notifications/tools/list_changed");
    assert.equal(b.handler.openStreams, 1);
    await second.cancel();
  });
});

/** The test server with a tool that asks the client for its roots. */
function rootsServer(): McpServer {
  const server = testServer();
  return defineServer({
    ...server.definition,
    tools: (server.definition.tools ?? []).concat(defineTool({
      name: "roots",
      handler: async (_args, frame) => `${(await frame.listRoots()).roots.length} roots`,
    })),
  });
}

Deno.test("instances: only answers to another instance's requests travel on the bus, from a batch too", async () => {
  await withTwoHandlers({ server: rootsServer }, async ({ a, b, signals }) => {
    const sessionId = await initialize(a.url, "2025-03-26", { roots: {} });
    const session = { "mcp-session-id": sessionId };
    const asking = await post(a.url, {
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "roots", arguments: {} },
    }, session);
    const stream = new SseReader(asking);
    const request = await stream.message();
    assert.equal(request.method, "roots/list");
    const answer = (id: unknown) => ({ jsonrpc: "2.0", id, result: { roots: [] } });
    // Ids no instance of this SDK issued: answered 202 and dropped, at either instance.
    for (const [url, id] of [[a.url, 7], [a.url, "foo"], [b.url, 8]] as const) {
      const response = await post(url, answer(id), session);
      assert.equal(response.status, 202);
      await response.body?.cancel();
    }
    // The client answers A's request inside a batch it sends to B.
    const batch = await post(
      b.url,
      [answer(request.id), { jsonrpc: "2.0", id: 2, method: "ping" }],
      session,
    );
    assert.equal(batch.status, 200);
    assert.deepEqual((await batch.json()).map((m: { id: unknown }) => m.id), [2]);
    const result = await within(3_000, stream.message(), "the tool's result at A");
    assert.deepEqual(result.result, { content: [{ type: "text", text: "0 roots" }] });
    // A late second answer at A, which sent that request, stays there.
    const late = await post(a.url, answer(request.id), session);
    assert.equal(late.status, 202);
    await late.body?.cancel();
    // An answer for another session object's request travels (the marker).
    const marker = "anubis-0123456789abcdef-1";
    const forwarded = await post(b.url, answer(marker), session);
    await forwarded.body?.cancel();
    const responses = () => signals.filter((signal) => signal.type === "response");
    await within(
      3_000,
      until(() => responses().some((s) => s.message.id === marker)),
      "the marker",
    );
    assert.deepEqual(responses().map((signal) => signal.message.id), [request.id, marker]);
    await stream.cancel();
  });
});

Deno.test("instances: a GET at B closes A's older stream although B's clock is behind", async () => {
  await withTwoHandlers({}, async ({ a, b }) => {
    const sessionId = await initialize(a.url, VERSION);
    const first = await openPrimed(a.url, sessionId);
    const now = Date.now;
    Date.now = () => now() - 60_000; // B's clock (the process's, here) a minute behind
    try {
      const second = await openPrimed(b.url, sessionId);
      assert.deepEqual(await within(3_000, first.rest(), "A's stream closing"), []);
      await new Promise((resolve) => setTimeout(resolve, 200)); // A's stream_opened was heard
      assert.equal(b.handler.openStreams, 1, "B's newer stream stays open");
      await second.cancel();
    } finally {
      Date.now = now;
    }
  });
});

Deno.test("instances: with an event store per instance, a GET at B still closes A's stream", async () => {
  // Each instance numbers the session on its own store, so those ids say
  // nothing about which GET is newer: the announcement alone decides.
  await withTwoHandlers({
    a: { eventStore: new MemoryEventStore() },
    b: { eventStore: new MemoryEventStore() },
  }, async ({ a, b }) => {
    const sessionId = await initialize(a.url, VERSION);
    const first = await openPrimed(a.url, sessionId);
    const second = await openPrimed(b.url, sessionId);
    assert.deepEqual(await within(3_000, first.rest(), "A's stream closing"), []);
    assert.equal(a.handler.openStreams, 0);
    await second.cancel();
  });
});
