/**
 * End-to-end tests of how an open standalone stream keeps its session alive:
 * the touch timer belongs to the connection, so a connection superseded
 * while it attached starts none, and nothing outlives the handler.
 */

import assert from "node:assert/strict";
import type { EventStore, SessionRecord, SessionStore, StoredEvent } from "@anubis/core";
import { MemoryEventStore } from "@anubis/event-store-memory";
import { initialize, start, until } from "../helpers/http_helpers.ts";

class CountingSessionStore implements SessionStore {
  readonly records = new Map<string, SessionRecord>();
  touches = 0;
  save(record: SessionRecord): Promise<void> {
    this.records.set(record.id, structuredClone(record));
    return Promise.resolve();
  }
  load(id: string): Promise<SessionRecord | undefined> {
    return Promise.resolve(this.records.get(id));
  }
  touch(): Promise<void> {
    this.touches++;
    return Promise.resolve();
  }
  delete(id: string): Promise<void> {
    this.records.delete(id);
    return Promise.resolve();
  }
}

/** A memory store whose first `latestId` waits for the second: two GETs attach at once. */
class GatedEventStore implements EventStore {
  readonly #inner = new MemoryEventStore();
  readonly #gate = Promise.withResolvers<void>();
  calls = 0;
  append(sessionId: string, data: string): Promise<number> {
    return this.#inner.append(sessionId, data);
  }
  replay(sessionId: string, afterId: number): Promise<StoredEvent[]> {
    return this.#inner.replay(sessionId, afterId);
  }
  async latestId(sessionId: string): Promise<number> {
    if (++this.calls === 1) await this.#gate.promise;
    else this.#gate.resolve();
    return await this.#inner.latestId(sessionId);
  }
  delete(sessionId: string): Promise<void> {
    return this.#inner.delete(sessionId);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

Deno.test("http stream hold: a GET superseded while it attaches leaves no timer and no slot; the session still expires", async () => {
  const sessionStore = new CountingSessionStore();
  const eventStore = new GatedEventStore();
  const idleMs = 600;
  const server = start({ eventStore, sessionStore, sessionIdleMs: idleMs });
  try {
    const sessionId = await initialize(server.url);
    const get = () =>
      fetch(server.url, {
        headers: {
          accept: "text/event-stream",
          "mcp-session-id": sessionId,
          "mcp-protocol-version": "2025-11-25",
        },
      });
    const first = get();
    await until(() => eventStore.calls === 1);
    const [older, newer] = await Promise.all([first, get()]);
    assert.equal(older.status, 200);
    assert.equal(newer.status, 200);
    // The older connection was closed while it attached: its body ends.
    await older.text();
    await newer.body!.cancel();
    await until(() => server.handler.openStreams === 0);
    const touches = sessionStore.touches;
    await sleep(idleMs + 300);
    assert.equal(sessionStore.touches, touches, "no touch once every connection ended");
    server.handler.sweep();
    assert.equal(server.handler.sessionCount, 0, "the session expired");
  } finally {
    // The test's op sanitizer fails on any timer left behind.
    await server.close();
  }
});

Deno.test("http stream hold: closing the handler ends an open stream's touch timer", async () => {
  const sessionStore = new CountingSessionStore();
  const server = start({ eventStore: new MemoryEventStore(), sessionStore, sessionIdleMs: 400 });
  let body: ReadableStream<Uint8Array> | null = null;
  try {
    const sessionId = await initialize(server.url);
    const response = await fetch(server.url, {
      headers: { accept: "text/event-stream", "mcp-session-id": sessionId },
    });
    assert.equal(response.status, 200);
    body = response.body;
    assert.ok(sessionStore.touches >= 1, "touched when the stream opened");
  } finally {
    await server.close();
    await body?.cancel();
  }
  const touches = sessionStore.touches;
  await sleep(250);
  assert.equal(sessionStore.touches, touches);
});
