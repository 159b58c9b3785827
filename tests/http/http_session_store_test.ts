/**
 * End-to-end tests of the session persistence hook: a session saved by one
 * handler is restored by another that shares the store.
 */

import assert from "node:assert/strict";
import type { SessionRecord, SessionStore } from "@anubis/core";
import { initialize, initializeRequest, post, start } from "../helpers/http_helpers.ts";

class MapSessionStore implements SessionStore {
  readonly records = new Map<string, SessionRecord>();
  failing = false;
  save(record: SessionRecord): Promise<void> {
    if (this.failing) return Promise.reject(new Error("store down"));
    this.records.set(record.id, structuredClone(record));
    return Promise.resolve();
  }
  load(id: string): Promise<SessionRecord | undefined> {
    if (this.failing) return Promise.reject(new Error("store down"));
    return Promise.resolve(this.records.get(id));
  }
  touch(): Promise<void> {
    return Promise.resolve();
  }
  delete(id: string): Promise<void> {
    this.records.delete(id);
    return Promise.resolve();
  }
}

const echo = (id: number) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name: "echo", arguments: { text: "again" } },
});

Deno.test("http session store: another handler restores a saved session, DELETE removes it", async () => {
  const store = new MapSessionStore();
  const first = start({ sessionStore: store });
  let sessionId: string;
  try {
    sessionId = await initialize(first.url, "2025-06-18");
    const record = store.records.get(sessionId)!;
    assert.equal(record.protocolVersion, "2025-06-18");
    assert.equal(record.initialized, true);
    const level = await post(first.url, {
      jsonrpc: "2.0",
      id: 1,
      method: "logging/setLevel",
      params: { level: "warning" },
    }, { "mcp-session-id": sessionId });
    assert.equal(level.status, 200);
    await level.body?.cancel();
    assert.equal(store.records.get(sessionId)!.logLevel, "warning");
  } finally {
    await first.close();
  }

  const second = start({ sessionStore: store });
  try {
    const response = await post(second.url, echo(2), {
      "mcp-session-id": sessionId,
      "mcp-protocol-version": "2025-06-18",
    });
    assert.equal(response.status, 200);
    assert.equal((await response.json()).result.content[0].text, "echo: again");
    assert.equal(second.handler.sessionCount, 1);
    const del = await fetch(second.url, {
      method: "DELETE",
      headers: { "mcp-session-id": sessionId },
    });
    assert.equal(del.status, 200);
    await del.body?.cancel();
    assert.equal(store.records.has(sessionId), false);
    const gone = await post(second.url, echo(3), { "mcp-session-id": sessionId });
    assert.equal(gone.status, 404);
    await gone.body?.cancel();
  } finally {
    await second.close();
  }
});

Deno.test("http session store: a failing store fails closed", async () => {
  const store = new MapSessionStore();
  const server = start({ sessionStore: store });
  try {
    const sessionId = await initialize(server.url);
    store.failing = true;
    const init = await post(server.url, initializeRequest(1));
    // The store is unavailable: 503, with the reason and the id.
    assert.equal(init.status, 503);
    assert.equal(init.headers.get("mcp-session-id"), null);
    const refused = await init.json();
    assert.equal(refused.id, 1);
    assert.equal(refused.error.code, -32603);
    assert.match(refused.error.message, /^Session store unavailable: .*\(store down\)$/);
    assert.equal(server.handler.sessionCount, 1);
    const unknown = await post(server.url, echo(2), { "mcp-session-id": "not-here" });
    assert.equal(unknown.status, 500);
    await unknown.body?.cancel();
    // A live session does not need the store to answer.
    const live = await post(server.url, echo(3), { "mcp-session-id": sessionId });
    assert.equal(live.status, 200);
    await live.body?.cancel();
    // Unless its state changed: a change the store cannot keep is not answered 200.
    const level = await post(server.url, {
      jsonrpc: "2.0",
      id: 4,
      method: "logging/setLevel",
      params: { level: "error" },
    }, { "mcp-session-id": sessionId });
    assert.equal(level.status, 503);
    const unsaved = await level.json();
    assert.equal(unsaved.id, 4);
    assert.match(unsaved.error.message, /^Session store unavailable: .*\(store down\)$/);
    store.failing = false;
    const retried = await post(server.url, echo(5), { "mcp-session-id": sessionId });
    assert.equal(retried.status, 200);
    await retried.body?.cancel();
    assert.equal(store.records.get(sessionId)!.logLevel, "error");
  } finally {
    await server.close();
  }
});

Deno.test("http session store: initialize naming a session another handler stored is -32600", async () => {
  const store = new MapSessionStore();
  const first = start({ sessionStore: store });
  const second = start({ sessionStore: store });
  try {
    const sessionId = await initialize(first.url);
    const again = await post(second.url, initializeRequest(3), { "mcp-session-id": sessionId });
    assert.equal(again.status, 400);
    const body = await again.json();
    assert.equal(body.id, 3);
    assert.equal(body.error.code, -32600);
    assert.equal(second.handler.sessionCount, 0);
  } finally {
    await first.close();
    await second.close();
  }
});
