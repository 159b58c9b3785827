import assert from "node:assert/strict";
import { defineServer } from "@anubis/core";
import { Engine } from "@anubis/core/engine";
import { createDefaultRegistry } from "@anubis/dialects";
import { SessionTable } from "./session_table.ts";

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
    a.session.initialized = b.session.initialized = true;
    assert.equal(table.create(), undefined, "full of finished handshakes");
    const stream = await table.streamOf(b).attach(undefined, false);
    a.session.lastActivity = 0;
    b.session.lastActivity = 0;
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
    finished.session.initialized = true;
    const older = table.create()!;
    const newer = table.create()!;
    const next = table.create();
    assert.ok(next);
    assert.equal(older.session.closed, true);
    assert.equal(newer.session.closed, false);
    assert.equal(finished.session.closed, false);
    next.session.initialized = newer.session.initialized = true;
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
    entry.session.lastActivity = 0;
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
