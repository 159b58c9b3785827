import assert from "node:assert/strict";
import { defineServer, type SessionRecord, type SessionStore } from "@anubis/core";
import { Engine } from "@anubis/core/engine";
import { createDefaultRegistry } from "@anubis/dialects";
import { SessionTable } from "./_session_table.ts";

Deno.test("session table: random ids, a bound, and idle expiry that spares open streams", async () => {
  const engine = new Engine(defineServer({ name: "s", version: "1" }), {
    registry: createDefaultRegistry(),
  });
  const table = new SessionTable(engine, {
    maxSessions: 2,
    idleMs: 60_000,
    stream: { retryMs: 1000, graceMs: 1000, keepAliveMs: 0 },
  });
  try {
    const a = table.create()!;
    const b = table.create()!;
    assert.notEqual(a.session.id, b.session.id);
    a.session.markInitialized();
    b.session.markInitialized();
    assert.equal(table.create(), undefined, "full of finished handshakes");
    const stream = await table.streamOf(b).attach(undefined, false);
    a.session.touch(0);
    b.session.touch(0);
    table.sweep(true);
    assert.equal(table.size, 1);
    assert.equal(a.session.closed, true);
    assert.equal(await table.find(a.session.id!, { transport: "http" }), undefined);
    assert.equal(await table.find(b.session.id!, { transport: "http" }), b);
    assert.ok(table.create(), "the expired session's slot is free again");
    table.close();
    assert.equal(stream.open, false);
    assert.equal(engine.sessions.size, 0);
  } finally {
    table.close();
    engine.close();
  }
});

Deno.test("session table: when full, the oldest unfinished handshake makes room; finished ones never do", () => {
  const engine = new Engine(defineServer({ name: "s", version: "1" }), {
    registry: createDefaultRegistry(),
  });
  const table = new SessionTable(engine, {
    maxSessions: 3,
    idleMs: 60_000,
    stream: { retryMs: 1000, graceMs: 1000, keepAliveMs: 0 },
  });
  try {
    const finished = table.create()!;
    finished.session.markInitialized();
    const older = table.create()!;
    const newer = table.create()!;
    const next = table.create();
    assert.ok(next);
    assert.equal(older.session.closed, true);
    assert.equal(newer.session.closed, false);
    assert.equal(finished.session.closed, false);
    next.session.markInitialized();
    newer.session.markInitialized();
    assert.equal(table.create(), undefined);
    assert.equal(table.size, 3);
  } finally {
    table.close();
    engine.close();
  }
});

Deno.test("session table: the sweep walks no sooner than a session can expire, then expires it", () => {
  const realNow = Date.now;
  let clock = realNow();
  Date.now = () => clock;
  const engine = new Engine(defineServer({ name: "s", version: "1" }), {
    registry: createDefaultRegistry(),
  });
  const table = new SessionTable(engine, {
    maxSessions: 10,
    idleMs: 60_000,
    stream: { retryMs: 1000, graceMs: 1000, keepAliveMs: 0 },
  });
  try {
    const entry = table.create()!;
    table.sweep(false);
    // A probe: any walk of the table would expire a session that looks this
    // idle (real activity only moves later, so the schedule may skip it).
    entry.session.touch(0);
    clock += 30_000; // far past a once-a-second schedule, before the session can expire
    table.sweep(false);
    assert.equal(table.size, 1, "the table was walked before its session could expire");
    clock += 30_001;
    table.sweep(false);
    assert.equal(table.size, 0);
    assert.equal(entry.session.closed, true);
  } finally {
    Date.now = realNow;
    table.close();
    engine.close();
  }
});

Deno.test("session table: a stored session bound to a principal is restored only for it, even when both ask at once", async () => {
  const records = new Map<string, SessionRecord>();
  const store: SessionStore = {
    save: (record) => Promise.resolve(void records.set(record.id, record)),
    load: (id) => Promise.resolve(records.get(id)),
    touch: () => Promise.resolve(),
    delete: (id) => Promise.resolve(void records.delete(id)),
  };
  let restores = 0;
  const server = defineServer({ name: "s", version: "1", init: () => void restores++ });
  const engine = new Engine(server, { registry: createDefaultRegistry() });
  const stream = { retryMs: 1000, graceMs: 1000, keepAliveMs: 0 };
  const options = { maxSessions: 10, idleMs: 60_000, sessionStore: store, stream };
  const opener = new SessionTable(engine, options);
  const other = new SessionTable(engine, options);
  try {
    const entry = opener.create()!;
    entry.session.bindOwner("ada");
    await engine.handle({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "c", version: "1" },
      },
    }, { transport: "http", session: entry.session });
    await opener.persist(entry);
    const id = entry.session.id!;
    assert.equal(records.get(id)?.owner, "ada");
    restores = 0;
    // Eve and Ada at once, at a table where the session is not live.
    const [eve, ada] = await Promise.all([
      other.find(id, { transport: "http" }, "eve"),
      other.find(id, { transport: "http" }, "ada"),
    ]);
    assert.equal(eve, undefined);
    assert.equal(typeof ada === "object" && ada.session.owner, "ada");
    assert.equal(restores, 1, "restored once, for Ada");
    assert.equal(await other.find(id, { transport: "http" }, "eve"), undefined);
    assert.equal(await other.find(id, { transport: "http" }), undefined, "no principal is another");
    assert.equal(await other.find(id, { transport: "http" }, "ada"), ada);
  } finally {
    opener.close();
    other.close();
    engine.close();
  }
});

Deno.test("session table: a full table takes back the least recently used idle session of the largest holder, never a held one, and no more than fair", async () => {
  const engine = new Engine(defineServer({ name: "s", version: "1" }), {
    registry: createDefaultRegistry(),
  });
  const table = new SessionTable(engine, {
    maxSessions: 6,
    maxSessionsPerClient: 5,
    idleMs: 60_000,
    stream: { retryMs: 1000, graceMs: 1000, keepAliveMs: 0 },
  });
  try {
    const opened = (client: string, at: number) => {
      const entry = table.create(client)!;
      entry.session.markInitialized();
      entry.session.touch(Date.now() - 10_000 + at);
      return entry;
    };
    const big = [0, 1, 2, 3, 4].map((i) => opened("big", i));
    const small = opened("small", 5);
    // big[0] is used most recently; big[1] has a stream attached: neither is taken.
    big[0].session.touch(Date.now());
    const stream = await table.streamOf(big[1]).attach(undefined, false);
    const first = table.create("new");
    assert.ok(first, "a new client is served from a full table");
    first.session.markInitialized();
    assert.equal(big[2].session.closed, true, "the largest holder's least recently used idle one");
    assert.equal(big[0].session.closed || big[1].session.closed || small.session.closed, false);
    // big holds 4, new 1: one more (4 >= 1 + 2) ...
    table.create("new")!.session.markInitialized();
    assert.equal(big[3].session.closed, true);
    // ... and then no one holds two more than new (big 3, new 2, small 1) ...
    assert.equal(table.create("new"), undefined);
    // ... but small may take one from big (3 >= 1 + 2), big[0] used lately and big[1] held stay.
    table.create("small")!.session.markInitialized();
    assert.equal(big[4].session.closed, true);
    assert.equal(big[0].session.closed || big[1].session.closed, false);
    // Shares equal (2, 2, 2): nobody takes from anybody.
    for (const client of ["big", "new", "small"]) assert.equal(table.create(client), undefined);
    await stream.readable.cancel();
  } finally {
    table.close();
    engine.close();
  }
});
