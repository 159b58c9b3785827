import assert from "node:assert/strict";
import type { StoredEvent } from "@anubis/core";
import { eventStoreContract } from "@anubis/testing";
import { MemoryEventStore } from "./memory_event_store.ts";

for (const c of eventStoreContract(() => ({ store: new MemoryEventStore() }))) {
  Deno.test(c.name, c.fn);
}

const ids = (events: StoredEvent[]) => events.map((e) => e.id);

async function appendMany(store: MemoryEventStore, sessionId: string, n: number) {
  for (let i = 0; i < n; i++) await store.append(sessionId, `${sessionId}${i + 1}`);
}

Deno.test("per-session retention keeps the newest events and ids keep counting", async () => {
  const store = new MemoryEventStore({ maxEventsPerSession: 3 });
  await appendMany(store, "s", 5);
  assert.deepEqual(await store.replay("s", 0), [
    { id: 3, data: "s3" },
    { id: 4, data: "s4" },
    { id: 5, data: "s5" },
  ]);
  assert.deepEqual(ids(await store.replay("s", 1)), [3, 4, 5], "a cursor before the oldest");
  assert.deepEqual(ids(await store.replay("s", 4)), [5]);
  assert.equal(await store.latestId("s"), 5);
  assert.equal(await store.append("s", "s6"), 6);
});

Deno.test("total retention evicts the store-wide oldest event first", async () => {
  const store = new MemoryEventStore({ maxEvents: 4 });
  await appendMany(store, "a", 2); // a1 a2
  await appendMany(store, "b", 2); // b1 b2
  await store.append("a", "a3"); // evicts a1
  await store.append("b", "b3"); // evicts a2
  assert.deepEqual(ids(await store.replay("a", 0)), [3]);
  assert.deepEqual(ids(await store.replay("b", 0)), [1, 2, 3]);
  await store.append("c", "c1"); // evicts b1
  assert.deepEqual(ids(await store.replay("b", 0)), [2, 3]);
  assert.equal(await store.latestId("a"), 3, "an emptied session keeps its counter");
});

Deno.test("deleting and per-session eviction do not confuse total eviction", async () => {
  const store = new MemoryEventStore({ maxEvents: 10, maxEventsPerSession: 2 });
  for (let round = 0; round < 50; round++) {
    await appendMany(store, `s${round % 7}`, 3);
    if (round % 5 === 0) await store.delete(`s${(round + 3) % 7}`);
  }
  let held = 0;
  for (let i = 0; i < 7; i++) {
    const events = await store.replay(`s${i}`, 0);
    assert.ok(events.length <= 2);
    const latest = await store.latestId(`s${i}`);
    if (events.length > 0) assert.equal(events.at(-1)!.id, latest);
    held += events.length;
  }
  assert.ok(held <= 10);
});

Deno.test("events older than ttlMs are dropped on read", async () => {
  let now = 1_000;
  const store = new MemoryEventStore({ ttlMs: 100, now: () => now });
  await store.append("s", "old");
  now += 60;
  await store.append("s", "new");
  now += 50;
  assert.deepEqual(await store.replay("s", 0), [{ id: 2, data: "new" }]);
  now += 100;
  assert.deepEqual(await store.replay("s", 0), []);
  assert.equal(await store.latestId("s"), 2);
  assert.equal(await store.append("s", "again"), 3);
});

Deno.test("a forgotten session never restarts below an id it handed out", async () => {
  const store = new MemoryEventStore({ maxSessions: 2 });
  await appendMany(store, "a", 3);
  await appendMany(store, "b", 1);
  await store.append("a", "a4"); // a is now the most recent
  await store.append("c", "c1"); // forgets b (least recently appended)
  assert.equal(await store.latestId("b"), 0);
  assert.deepEqual(await store.replay("a", 0).then(ids), [1, 2, 3, 4]);
  assert.equal(await store.latestId("c"), 1, "c was created before b was forgotten");
  assert.equal(await store.append("d", "d1"), 2, "continues above b's last id"); // forgets a
  assert.equal(await store.latestId("a"), 0);
  assert.equal(await store.append("a", "back"), 5, "continues above a's last id");
});

Deno.test("invalid limits are rejected", () => {
  assert.throws(() => new MemoryEventStore({ maxEvents: 0 }), RangeError);
  assert.throws(() => new MemoryEventStore({ maxEventsPerSession: 1.5 }), RangeError);
  assert.throws(() => new MemoryEventStore({ ttlMs: -1 }), RangeError);
});

async function take(iterable: AsyncIterable<StoredEvent>, n: number): Promise<StoredEvent[]> {
  const out: StoredEvent[] = [];
  if (n === 0) return out;
  for await (const event of iterable) {
    out.push(event);
    if (out.length === n) break;
  }
  return out;
}

Deno.test("tail yields held events after the cursor, then live appends", async () => {
  const store = new MemoryEventStore();
  await appendMany(store, "s", 2);
  await store.append("other", "x");
  const stop = new AbortController();
  const got = take(store.tail("s", 1, stop.signal), 3);
  await store.append("other", "y");
  await store.append("s", "s3");
  await store.append("s", "s4");
  assert.deepEqual(await got, [
    { id: 2, data: "s2" },
    { id: 3, data: "s3" },
    { id: 4, data: "s4" },
  ]);
  stop.abort();
});

Deno.test("tail waits for a session that does not exist yet", async () => {
  const store = new MemoryEventStore();
  const stop = new AbortController();
  const got = take(store.tail("later", 0, stop.signal), 1);
  await new Promise((r) => setTimeout(r, 5));
  await store.append("later", "hi");
  assert.deepEqual(await got, [{ id: 1, data: "hi" }]);
});

Deno.test("tail ends on abort and on delete", async () => {
  const store = new MemoryEventStore();
  await store.append("s", "a");
  const stop = new AbortController();
  const aborted = take(store.tail("s", 1, stop.signal), 5);
  setTimeout(() => stop.abort(), 5);
  assert.deepEqual(await aborted, []);

  const deleted = take(store.tail("s", 0, new AbortController().signal), 5);
  setTimeout(() => store.delete("s"), 5);
  assert.deepEqual(await deleted, [{ id: 1, data: "a" }]);
});

Deno.test("many tails on one session each see every event once", async () => {
  const store = new MemoryEventStore();
  const stop = new AbortController();
  const tails = Array.from({ length: 5 }, () => take(store.tail("s", 0, stop.signal), 20));
  await Promise.all(Array.from({ length: 20 }, (_, i) => store.append("s", `e${i}`)));
  for (const events of await Promise.all(tails)) {
    assert.deepEqual(ids(events), Array.from({ length: 20 }, (_, i) => i + 1));
  }
  stop.abort();
});
