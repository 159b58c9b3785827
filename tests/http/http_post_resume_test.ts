/**
 * End-to-end tests of resumable POST streams (2025-11-25, SEP-1699 polling)
 * over raw fetch: the priming event, a handler closing its stream mid-call,
 * and `GET` with the stream's `Last-Event-ID` delivering the rest of that
 * stream and nothing of any other.
 */

import assert from "node:assert/strict";
import {
  defineServer,
  type EventStore,
  type McpServer,
  type SessionRecord,
  type SessionStore,
} from "@anubis/core";
import { MemoryEventStore } from "@anubis/event-store-memory";
import { openKvEventStore } from "@anubis/event-store-kv";
import {
  initialize,
  type ParsedEvent,
  post,
  SseReader,
  start,
  TinyEventStore,
} from "../helpers/http_helpers.ts";

/** Lets a test decide when the `poll` tool goes on after closing its stream. */
let openGate: () => void = () => {};

function pollServer(): McpServer {
  return defineServer({
    name: "post-resume-test",
    version: "1.0.0",
    tools: [{
      name: "poll",
      handler: async (_args, frame) => {
        const gate = new Promise<void>((resolve) => (openGate = resolve));
        await frame.progress(1, { total: 2 });
        frame.closeStream();
        await gate;
        await frame.progress(2, { total: 2 });
        return "polled";
      },
    }, {
      name: "poll_quick",
      handler: (_args, frame) => `closed: ${frame.closeStream()}`,
    }],
  });
}

function call(id: number, name: string, sessionId: string, version = "2025-11-25") {
  return {
    body: {
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { name, arguments: {}, _meta: { progressToken: `p${id}` } },
    },
    headers: { "mcp-session-id": sessionId, "mcp-protocol-version": version },
  };
}

function resume(url: string, sessionId: string, lastEventId: string): Promise<Response> {
  return fetch(url, {
    headers: {
      accept: "text/event-stream",
      "mcp-session-id": sessionId,
      "mcp-protocol-version": "2025-11-25",
      "last-event-id": lastEventId,
    },
  });
}

async function all(reader: SseReader): Promise<ParsedEvent[]> {
  const events: ParsedEvent[] = [];
  for (let event = await reader.next(); event; event = await reader.next()) events.push(event);
  return events;
}

const messagesOf = (events: ParsedEvent[]) =>
  events.filter((e) => e.data).map((e) => JSON.parse(e.data!));

Deno.test("http post resume: priming first, the stream closes mid-call, GET with its Last-Event-ID gets the rest of that stream only", async () => {
  const server = start({ eventStore: new MemoryEventStore() }, pollServer());
  try {
    const sessionId = await initialize(server.url, "2025-11-25");
    const { body, headers } = call(1, "poll", sessionId);
    const response = await post(server.url, body, headers);
    assert.equal(response.headers.get("content-type"), "text/event-stream");
    const first = await all(new SseReader(response));
    const [priming, progress] = first;
    const key = priming.id!.split("-")[0];
    assert.deepEqual(priming, { id: `${key}-${key}`, retry: "3000", data: "" });
    assert.match(progress.id!, new RegExp(`^${key}-\\d+$`));
    assert.deepEqual(messagesOf(first).map((m) => m.params.progress), [1]);

    // A message of the standalone stream, recorded in the same session meanwhile.
    server.handler.engine.server.notify.toolsListChanged();
    const resumed = await resume(server.url, sessionId, progress.id!);
    assert.equal(resumed.status, 200);
    openGate();
    const rest = await all(new SseReader(resumed));
    assert.ok(rest.every((e) => e.id?.startsWith(`${key}-`)), JSON.stringify(rest));
    const ids = [progress, ...rest].map((e) => Number(e.id!.split("-")[1]));
    assert.deepEqual(ids, [...ids].sort((a, b) => a - b), "ids increase");
    assert.equal(new Set(ids).size, ids.length, "no id twice");
    const messages = messagesOf(rest);
    assert.deepEqual(messages.map((m) => m.params?.progress ?? m.result.content[0].text), [
      2,
      "polled",
    ]);

    // The standalone stream replays its own message and none of the POST stream's.
    const standalone = new SseReader(await resume(server.url, sessionId, "0"));
    let event = await standalone.next();
    assert.equal(event?.data, "", "the standalone stream's own priming event");
    event = await standalone.next();
    assert.deepEqual(JSON.parse(event!.data!), {
      jsonrpc: "2.0",
      method: "notifications/tools/list_changed",
    });
    assert.ok(!event!.id!.includes("-"));
    await standalone.cancel();
  } finally {
    await server.close();
  }
});

const stores: [string, () => EventStore][] = [
  ["memory store (tail-driven)", () => new MemoryEventStore()],
  ["store without tail()", () => new TinyEventStore()],
];

for (const [name, makeStore] of stores) {
  Deno.test(`http post resume, ${name}: a stream that ended while disconnected is replayed from the store, every time`, async () => {
    const server = start({ eventStore: makeStore() }, pollServer());
    try {
      const sessionId = await initialize(server.url, "2025-11-25");
      const { body, headers } = call(2, "poll_quick", sessionId);
      const [priming] = await all(new SseReader(await post(server.url, body, headers)));
      assert.equal(priming.data, "");
      for (let attempt = 0; attempt < 2; attempt++) {
        const rest = messagesOf(
          await all(new SseReader(await resume(server.url, sessionId, priming.id!))),
        );
        assert.deepEqual(rest, [{
          jsonrpc: "2.0",
          id: 2,
          result: { content: [{ type: "text", text: "closed: true" }] },
        }]);
      }
    } finally {
      await server.close();
    }
  });
}

const sharedStores: [string, () => Promise<{ store: EventStore; close(): Promise<void> }>][] = [
  ["memory store", () => Promise.resolve({ store: new MemoryEventStore(), close: async () => {} })],
  ["KV file", async () => {
    const dir = await Deno.makeTempDir();
    const store = await openKvEventStore(`${dir}/events.sqlite`, { pollIntervalMs: 20 });
    return {
      store,
      close: async () => {
        await store.close();
        await Deno.remove(dir, { recursive: true });
      },
    };
  }],
];

for (const [name, makeShared] of sharedStores) {
  Deno.test(`http post resume, ${name}: a request running on one instance resumes on another through the store's tail`, async () => {
    const shared = await makeShared();
    const events = shared.store;
    const records = new Map<string, SessionRecord>();
    const sessionStore: SessionStore = {
      save: (record) => Promise.resolve(void records.set(record.id, record)),
      load: (id) => Promise.resolve(records.get(id)),
      touch: () => Promise.resolve(),
      delete: (id) => Promise.resolve(void records.delete(id)),
    };
    const a = start({ eventStore: events, sessionStore }, pollServer());
    const b = start({ eventStore: events, sessionStore }, pollServer());
    try {
      const sessionId = await initialize(a.url, "2025-11-25");
      const { body, headers } = call(5, "poll", sessionId);
      const first = await all(new SseReader(await post(a.url, body, headers)));
      const resumed = await resume(b.url, sessionId, first.at(-1)!.id!);
      assert.equal(resumed.status, 200);
      openGate();
      const rest = messagesOf(await all(new SseReader(resumed)));
      assert.deepEqual(rest.map((m) => m.params?.progress ?? m.result.content[0].text), [
        2,
        "polled",
      ]);
    } finally {
      await a.close();
      await b.close();
      await shared.close();
    }
  });
}

Deno.test("http post resume: another session's stream id, or an unknown one, is refused with 400", async () => {
  const server = start({ eventStore: new MemoryEventStore() }, pollServer());
  try {
    const a = await initialize(server.url, "2025-11-25");
    const b = await initialize(server.url, "2025-11-25");
    const { body, headers } = call(3, "poll_quick", a);
    const [priming] = await all(new SseReader(await post(server.url, body, headers)));
    for (const [session, lastEventId] of [[b, priming.id!], [a, "999-999"]]) {
      const refused = await resume(server.url, session, lastEventId);
      assert.equal(refused.status, 400);
      assert.match((await refused.json()).error.message, /no stream of this session/);
    }
  } finally {
    await server.close();
  }
});

Deno.test("http post resume: without an event store, or before 2025-11-25, closeStream does nothing and the result comes as JSON", async () => {
  for (
    const [options, version] of [[{}, "2025-11-25"], [
      { eventStore: new MemoryEventStore() },
      "2025-06-18",
    ]] as const
  ) {
    const server = start(options, pollServer());
    try {
      const sessionId = await initialize(server.url, version);
      const { body, headers } = call(4, "poll_quick", sessionId, version);
      const response = await post(server.url, body, headers);
      assert.equal(response.headers.get("content-type"), "application/json");
      assert.equal((await response.json()).result.content[0].text, "closed: false");
    } finally {
      await server.close();
    }
  }
});
