/**
 * End-to-end tests of resumability on the standalone GET stream (seed 002):
 * store-owned ids, priming, replay after Last-Event-ID with no gap and no
 * duplicate, recording while disconnected, no cross-session replay, DELETE
 * failing closed, the grace period.
 */

import assert from "node:assert/strict";
import type { EventStore, SessionRecord, SessionStore } from "@anubis/core";
import { MemoryEventStore } from "@anubis/event-store-memory";
import {
  initialize,
  type ParsedEvent,
  post,
  SseReader,
  start,
  TinyEventStore,
  until,
} from "../helpers/http_helpers.ts";

function open(url: string, sessionId: string, lastEventId?: string): Promise<Response> {
  const headers: Record<string, string> = {
    accept: "text/event-stream",
    "mcp-session-id": sessionId,
  };
  if (lastEventId !== undefined) headers["last-event-id"] = lastEventId;
  return fetch(url, { headers });
}

async function nextData(reader: SseReader): Promise<ParsedEvent> {
  while (true) {
    const event = await reader.next();
    if (!event) throw new Error("stream ended");
    if (event.data) return event;
  }
}

const stores: [string, () => EventStore][] = [
  ["memory store (tail-driven)", () => new MemoryEventStore()],
  ["store without tail()", () => new TinyEventStore()],
];

for (const [name, makeStore] of stores) {
  Deno.test(`http resume, ${name}: priming, replay after Last-Event-ID, then live, nothing lost or doubled`, async () => {
    const server = start({ eventStore: makeStore() });
    const notify = server.handler.engine.server.notify;
    try {
      const sessionId = await initialize(server.url, "2025-11-25");
      const first = new SseReader(await open(server.url, sessionId));
      const priming = await first.next();
      assert.deepEqual(priming, { id: "0", retry: "3000", data: "" });
      notify.toolsListChanged();
      const one = await nextData(first);
      assert.equal(one.id, "1");
      assert.deepEqual(JSON.parse(one.data!), {
        jsonrpc: "2.0",
        method: "notifications/tools/list_changed",
      });
      notify.promptsListChanged();
      notify.resourcesListChanged();
      await first.cancel();
      // Sent while (or before the server noticed) no stream is attached: recorded.
      notify.toolsListChanged();
      notify.promptsListChanged();

      const resumed = new SseReader(await open(server.url, sessionId, "1"));
      assert.deepEqual(await resumed.next(), { id: "1", retry: "3000", data: "" });
      const ids: string[] = [];
      const methods: string[] = [];
      while (ids.length < 4) {
        const event = await nextData(resumed);
        ids.push(event.id!);
        methods.push(JSON.parse(event.data!).method);
      }
      assert.deepEqual(ids, ["2", "3", "4", "5"]);
      assert.deepEqual(methods, [
        "notifications/prompts/list_changed",
        "notifications/resources/list_changed",
        "notifications/tools/list_changed",
        "notifications/prompts/list_changed",
      ]);
      notify.resourcesListChanged();
      assert.equal((await nextData(resumed)).id, "6");
      await resumed.cancel();
    } finally {
      await server.close();
    }
  });
}

Deno.test("http resume: a session never replays another session's events", async () => {
  const server = start({ eventStore: new MemoryEventStore() });
  const notify = server.handler.engine.server.notify;
  try {
    const x = await initialize(server.url);
    const y = await initialize(server.url);
    const subscribe = await post(server.url, {
      jsonrpc: "2.0",
      id: 1,
      method: "resources/subscribe",
      params: { uri: "test://r" },
    }, { "mcp-session-id": x });
    assert.equal(subscribe.status, 200);
    await subscribe.body?.cancel();
    const xStream = new SseReader(await open(server.url, x));
    await xStream.next();
    for (let i = 0; i < 3; i++) notify.resourceUpdated("test://r");
    for (let i = 1; i <= 3; i++) assert.equal((await nextData(xStream)).id, String(i));

    // Y presents X's cursors: it gets its own (empty) history, then its own live ids.
    const yStream = new SseReader(await open(server.url, y, "0"));
    assert.deepEqual(await yStream.next(), { id: "0", retry: "3000", data: "" });
    notify.toolsListChanged();
    const yFirst = await nextData(yStream);
    assert.equal(yFirst.id, "1");
    assert.equal(JSON.parse(yFirst.data!).method, "notifications/tools/list_changed");
    await yStream.cancel();
    const yAgain = new SseReader(await open(server.url, y, "3"));
    assert.deepEqual(await yAgain.next(), { id: "1", retry: "3000", data: "" });
    notify.promptsListChanged();
    const next = await nextData(yAgain);
    assert.equal(next.id, "2");
    assert.equal(JSON.parse(next.data!).method, "notifications/prompts/list_changed");
    await yAgain.cancel();
    await xStream.cancel();
  } finally {
    await server.close();
  }
});

Deno.test("http resume: a new GET supersedes the open one", async () => {
  const server = start({ eventStore: new MemoryEventStore() });
  try {
    const sessionId = await initialize(server.url);
    const a = new SseReader(await open(server.url, sessionId));
    await a.next();
    const b = new SseReader(await open(server.url, sessionId));
    await b.next();
    assert.equal(await a.next(), undefined);
    server.handler.engine.server.notify.toolsListChanged();
    assert.equal((await nextData(b)).id, "1");
    await b.cancel();
  } finally {
    await server.close();
  }
});

Deno.test("http resume: no priming before 2025-11-25, per-connection ids without a store", async () => {
  const withStore = start({ eventStore: new MemoryEventStore() });
  const withoutStore = start();
  try {
    const old = await initialize(withStore.url, "2025-06-18");
    const reader = new SseReader(await open(withStore.url, old));
    withStore.handler.engine.server.notify.toolsListChanged();
    const event = await reader.next();
    assert.equal(event?.id, "1");
    assert.ok(event?.data);
    await reader.cancel();

    const plain = await initialize(withoutStore.url);
    const first = new SseReader(await open(withoutStore.url, plain, "7"));
    withoutStore.handler.engine.server.notify.toolsListChanged();
    assert.equal((await first.next())?.id, "1");
    await first.cancel();
  } finally {
    await withStore.close();
    await withoutStore.close();
  }
});

Deno.test("http resume: DELETE fails closed when the store cannot delete, then succeeds", async () => {
  const store = new TinyEventStore();
  const server = start({ eventStore: store });
  try {
    const sessionId = await initialize(server.url);
    const reader = new SseReader(await open(server.url, sessionId));
    await reader.next();
    store.failDelete = true;
    const failed = await fetch(server.url, {
      method: "DELETE",
      headers: { "mcp-session-id": sessionId },
    });
    assert.equal(failed.status, 500);
    assert.equal((await failed.json()).error.code, -32603);
    // The session and its stream are still there.
    server.handler.engine.server.notify.toolsListChanged();
    assert.equal((await nextData(reader)).id, "1");
    store.failDelete = false;
    const done = await fetch(server.url, {
      method: "DELETE",
      headers: { "mcp-session-id": sessionId },
    });
    assert.equal(done.status, 200);
    await done.body?.cancel();
    assert.equal(await reader.next(), undefined);
    assert.deepEqual(store.deleted, [sessionId]);
    assert.equal(await store.latestId(sessionId), 0);
  } finally {
    await server.close();
  }
});

Deno.test("http resume: an abandoned stream's events are deleted after the grace period", async () => {
  const store = new TinyEventStore();
  const server = start({ eventStore: store, streamGraceMs: 1 });
  try {
    const sessionId = await initialize(server.url);
    const reader = new SseReader(await open(server.url, sessionId));
    await reader.next();
    server.handler.engine.server.notify.toolsListChanged();
    await nextData(reader);
    await reader.cancel();
    await until(() => store.deleted.includes(sessionId));
    assert.equal(await store.latestId(sessionId), 0);
    // The session lives on; a new stream starts a fresh recording.
    const again = new SseReader(await open(server.url, sessionId, "0"));
    assert.deepEqual(await again.next(), { id: "0", retry: "3000", data: "" });
    await again.cancel();
  } finally {
    await server.close();
  }
});

Deno.test("http resume: superseding at the stream limit keeps the count exact", async () => {
  const server = start({ maxStreams: 1 });
  try {
    const sessionId = await initialize(server.url);
    const a = new SseReader(await open(server.url, sessionId));
    const b = await open(server.url, sessionId);
    assert.equal(b.status, 200);
    assert.equal(await a.next(), undefined);
    assert.equal(server.handler.openStreams, 1);
    const other = await initialize(server.url);
    const refused = await open(server.url, other);
    assert.equal(refused.status, 503);
    await refused.body?.cancel();
    await b.body?.cancel();
    await until(() => server.handler.openStreams === 0);
  } finally {
    await server.close();
  }
});

Deno.test("http resume: a stream on one instance delivers what another instance appended", async () => {
  const events = new MemoryEventStore();
  const records = new Map<string, SessionRecord>();
  const sessionStore: SessionStore = {
    save: (record) => Promise.resolve(void records.set(record.id, record)),
    load: (id) => Promise.resolve(records.get(id)),
    touch: () => Promise.resolve(),
    delete: (id) => Promise.resolve(void records.delete(id)),
  };
  const a = start({ eventStore: events, sessionStore });
  const b = start({ eventStore: events, sessionStore });
  try {
    const sessionId = await initialize(a.url);
    const stream = new SseReader(await open(b.url, sessionId));
    assert.deepEqual(await stream.next(), { id: "0", retry: "3000", data: "" });
    a.handler.engine.server.notify.toolsListChanged();
    const event = await nextData(stream);
    assert.equal(event.id, "1");
    assert.equal(JSON.parse(event.data!).method, "notifications/tools/list_changed");
    await stream.cancel();
  } finally {
    await a.close();
    await b.close();
  }
});

Deno.test("http resume: many sessions at once each get exactly their own ids", async () => {
  const server = start({ eventStore: new MemoryEventStore() });
  try {
    const ids = await Promise.all(Array.from({ length: 20 }, () => initialize(server.url)));
    const readers = await Promise.all(ids.map(async (id) => {
      const reader = new SseReader(await open(server.url, id));
      await reader.next();
      return reader;
    }));
    const notify = server.handler.engine.server.notify;
    for (let i = 0; i < 5; i++) notify.toolsListChanged();
    const seen = await Promise.all(readers.map(async (reader) => {
      const got: string[] = [];
      for (let i = 0; i < 5; i++) got.push((await nextData(reader)).id!);
      return got.join(",");
    }));
    assert.deepEqual(new Set(seen), new Set(["1,2,3,4,5"]));
    const deletes = await Promise.all(
      ids.map((id) => fetch(server.url, { method: "DELETE", headers: { "mcp-session-id": id } })),
    );
    for (const response of deletes) {
      assert.equal(response.status, 200);
      await response.body?.cancel();
    }
    for (const reader of readers) assert.equal(await reader.next(), undefined);
    assert.equal(server.handler.sessionCount, 0);
    assert.equal(server.handler.openStreams, 0);
  } finally {
    await server.close();
  }
});

/** The warning a resumed stream that lost events `from`..`to` carries as a `message` event. */
function gapNotice(from: number, to: number): ParsedEvent {
  return {
    event: "message",
    data: JSON.stringify({
      jsonrpc: "2.0",
      method: "notifications/message",
      params: { level: "warning", logger: "anubis.resume", data: { lostEvents: { from, to } } },
    }),
  };
}

Deno.test("http resume: after the store dropped events, the resumed stream says so (priming, warning, gap, replay)", async () => {
  const server = start({ eventStore: new MemoryEventStore({ maxEventsPerSession: 3 }) });
  const notify = server.handler.engine.server.notify;
  try {
    const sessionId = await initialize(server.url, "2025-11-25");
    // Recorded with no stream attached: ids 1..6, of which the store keeps 4..6.
    for (let i = 0; i < 6; i++) notify.toolsListChanged();
    const resumed = new SseReader(await open(server.url, sessionId, "1"));
    assert.deepEqual(await resumed.next(), { id: "1", retry: "3000", data: "" });
    // Neither the warning nor the gap event has an id: the client's cursor stays on 1.
    assert.deepEqual(await resumed.next(), gapNotice(2, 3));
    assert.deepEqual(await resumed.next(), { event: "gap", data: '{"from":2,"to":3}' });
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await nextData(resumed)).id);
    assert.deepEqual(ids, ["4", "5", "6"]);
    await resumed.cancel();
    // A resume with nothing dropped has neither; the warning was not recorded either.
    const whole = new SseReader(await open(server.url, sessionId, "4"));
    assert.deepEqual(await whole.next(), { id: "4", retry: "3000", data: "" });
    const next = await whole.next();
    assert.equal(next?.id, "5");
    assert.equal(next?.event, "message");
    assert.equal(JSON.parse(next!.data!).method, "notifications/tools/list_changed");
    await whole.cancel();
  } finally {
    await server.close();
  }
});

Deno.test("http resume: the lost-events warning honours logging/setLevel, the gap event does not; 2025-03-26 has it unprimed", async () => {
  const server = start({ eventStore: new MemoryEventStore({ maxEventsPerSession: 2 }) });
  const notify = server.handler.engine.server.notify;
  try {
    const quiet = await initialize(server.url, "2025-03-26");
    const level = await post(
      server.url,
      { jsonrpc: "2.0", id: 1, method: "logging/setLevel", params: { level: "error" } },
      { "mcp-session-id": quiet },
    );
    assert.equal(level.status, 200);
    await level.body?.cancel();
    const loud = await initialize(server.url, "2025-03-26");
    // Each session records ids 1..4 and keeps 3..4.
    for (let i = 0; i < 4; i++) notify.toolsListChanged();
    const heard = new SseReader(await open(server.url, loud, "1"));
    assert.deepEqual(await heard.next(), gapNotice(2, 2));
    assert.deepEqual(await heard.next(), { event: "gap", data: '{"from":2,"to":2}' });
    assert.equal((await heard.next())?.id, "3");
    await heard.cancel();
    const muted = new SseReader(await open(server.url, quiet, "1"));
    assert.deepEqual(await muted.next(), { event: "gap", data: '{"from":2,"to":2}' });
    assert.equal((await muted.next())?.id, "3");
    await muted.cancel();
  } finally {
    await server.close();
  }
});
