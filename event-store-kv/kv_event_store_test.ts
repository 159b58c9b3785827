import assert from "node:assert/strict";
import type { StoredEvent } from "@anubis/core";
import { eventStoreContract } from "@anubis/testing";
import { COUNTER_GRACE_MS, KvEventStore, type KvEventStoreOptions } from "./kv_event_store.ts";
import type { KvKey, KvLike } from "@anubis/core/kv";
import { tempKv } from "../core/kv/testdata/temp_kv.ts";
import { ExpiringKv } from "./testdata/expiring_kv.ts";

for (
  const c of eventStoreContract(async () => {
    const { kv, close } = await tempKv("events.kv");
    return { store: new KvEventStore(kv), close };
  })
) {
  Deno.test(c.name, c.fn);
}

async function withStore(
  options: KvEventStoreOptions,
  body: (store: KvEventStore, kv: KvLike) => Promise<void>,
): Promise<void> {
  const { kv, close } = await tempKv("events.kv");
  try {
    await body(new KvEventStore(kv, options), kv);
  } finally {
    await close();
  }
}

async function countKeys(kv: KvLike, prefix: readonly (string | bigint)[]): Promise<number> {
  let n = 0;
  for await (const _ of kv.list({ prefix })) n++;
  return n;
}

const ids = (events: StoredEvent[]) => events.map((e) => e.id);

Deno.test("events over one KV value, and over one commit, round-trip byte-exact", async () => {
  await withStore({}, async (store, kv) => {
    const multiByte = "é".repeat(40_000) + "🎉".repeat(20_000); // parts split inside characters
    const huge = "z".repeat(2_500_000); // over one commit's 819,200 bytes: staged as a blob
    await store.append("s", multiByte);
    await store.append("s", huge);
    await store.append("s", "small");
    const events = await store.replay("s", 0);
    assert.deepEqual(ids(events), [1, 2, 3]);
    assert.equal(events[0].data, multiByte);
    assert.equal(events[1].data, huge);
    assert.equal(events[2].data, "small");
    for await (const entry of kv.list<unknown>({ prefix: ["anubis", "events"] })) {
      const value = entry.value;
      if (entry.key.at(-1) === "id") {
        assert.ok(value instanceof Deno.KvU64, "the counter, a KvU64 as every release reads it");
        continue;
      }
      assert.ok(value instanceof Uint8Array, "bytes, which Node reads too");
      assert.ok(value.length <= 65_536);
    }
    await store.delete("s");
    assert.equal(await countKeys(kv, ["anubis", "events", "s"]), 0, "blob parts deleted too");
  });
});

Deno.test("retention by count hides old events at once and deletes them in batches", async () => {
  await withStore({ maxEventsPerSession: 3 }, async (store, kv) => {
    for (let i = 1; i <= 130; i++) await store.append("s", `e${i}`);
    assert.deepEqual(await store.replay("s", 0), [
      { id: 128, data: "e128" },
      { id: 129, data: "e129" },
      { id: 130, data: "e130" },
    ]);
    assert.deepEqual(ids(await store.replay("s", 129)), [130]);
    assert.equal(await store.latestId("s"), 130);
    assert.ok(await countKeys(kv, ["anubis", "events", "s", "ev"]) <= 3 + 64);
  });
});

Deno.test("events older than ttlMs are not replayed, whatever KV still holds", async () => {
  let now = 1_000_000;
  await withStore({ ttlMs: 1_000, now: () => now }, async (store) => {
    await store.append("s", "old");
    now += 600;
    await store.append("s", "new");
    now += 500;
    assert.deepEqual(await store.replay("s", 0), [{ id: 2, data: "new" }]);
    now += 1_000;
    assert.deepEqual(await store.replay("s", 0), []);
    assert.equal(await store.append("s", "next"), 3, "the counter outlives its events");
  });
});

Deno.test("delete removes every key of the session and no other", async () => {
  await withStore({}, async (store, kv) => {
    await store.append("a", "x".repeat(100_000));
    await store.append("a", "y");
    await store.append("a:b", "z");
    await store.append("id", "w"); // a session named like the counter key part
    await store.delete("a");
    await store.delete("a");
    assert.equal(await countKeys(kv, ["anubis", "events", "a"]), 0);
    assert.deepEqual(await store.replay("a:b", 0), [{ id: 1, data: "z" }]);
    assert.deepEqual(await store.replay("id", 0), [{ id: 1, data: "w" }]);
    assert.equal(await store.append("a", "again"), 1);
  });
});

Deno.test("stores with different prefixes share a database without meeting", async () => {
  await withStore({ prefix: ["one"] }, async (one, kv) => {
    const two = new KvEventStore(kv, { prefix: ["two"] });
    await one.append("s", "1");
    assert.equal(await two.latestId("s"), 0);
    assert.equal(await two.append("s", "2"), 1);
  });
});

Deno.test("a second store instance continues the ids the first one gave", async () => {
  await withStore({}, async (first, kv) => {
    const second = new KvEventStore(kv);
    assert.equal(await first.append("s", "a"), 1);
    assert.equal(await second.append("s", "b"), 2);
    assert.equal(await first.append("s", "c"), 3, "a stale cached counter is re-read");
  });
});

async function take(iterable: AsyncIterable<StoredEvent>, n: number): Promise<StoredEvent[]> {
  const out: StoredEvent[] = [];
  for await (const event of iterable) {
    out.push(event);
    if (out.length === n) break;
  }
  return out;
}

Deno.test("tail yields retained events after the cursor, then live ones from any instance", async () => {
  await withStore({ pollIntervalMs: 20 }, async (store, kv) => {
    const other = new KvEventStore(kv);
    await store.append("s", "a");
    await store.append("s", "b");
    const stop = new AbortController();
    const got = take(store.tail("s", 1, stop.signal), 3);
    await store.append("s", "c"); // wakes the tail at once
    await other.append("s", "d"); // found by the poll
    assert.deepEqual(await got, [
      { id: 2, data: "b" },
      { id: 3, data: "c" },
      { id: 4, data: "d" },
    ]);
    stop.abort();
  });
});

Deno.test("tail ends on abort and when the session is deleted", async () => {
  await withStore({ pollIntervalMs: 20 }, async (store) => {
    await store.append("s", "a");
    const stop = new AbortController();
    const aborted = take(store.tail("s", 1, stop.signal), 5);
    setTimeout(() => stop.abort(), 30);
    assert.deepEqual(await aborted, []);

    const deleted = take(store.tail("s", 0, new AbortController().signal), 5);
    setTimeout(() => store.delete("s"), 30);
    assert.deepEqual(await deleted, [{ id: 1, data: "a" }]);
  });
});

Deno.test("tail with watch wakes on another instance's append", async () => {
  await withStore({ watch: true, pollIntervalMs: 60_000 }, async (store, kv) => {
    const other = new KvEventStore(kv);
    const stop = new AbortController();
    const got = take(store.tail("s", 0, stop.signal), 2);
    await new Promise((r) => setTimeout(r, 20));
    await other.append("s", "x");
    await other.append("s", "y");
    assert.deepEqual(ids(await got), [1, 2]);
    stop.abort();
  });
});

Deno.test("invalid options are rejected", async () => {
  const kv = await Deno.openKv(":memory:");
  assert.throws(() => new KvEventStore(kv, { maxEventsPerSession: 0 }), RangeError);
  assert.throws(() => new KvEventStore(kv, { pollIntervalMs: -5 }), RangeError);
  kv.close();
});

Deno.test("two instances appending at once race on the counter and still get 1..N", async () => {
  await withStore({}, async (first, kv) => {
    const second = new KvEventStore(kv);
    const ids = await Promise.all(
      Array.from({ length: 100 }, (_, i) => (i % 2 ? first : second).append("s", `e${i}`)),
    );
    assert.deepEqual([...ids].sort((a, b) => a - b), Array.from({ length: 100 }, (_, i) => i + 1));
    const events = await first.replay("s", 0);
    for (const [i, id] of ids.entries()) assert.equal(events[id - 1].data, `e${i}`);
  });
});

Deno.test("an append that keeps meeting a locked database fails closed", async () => {
  const kv = await Deno.openKv(":memory:");
  const locked: KvLike = {
    get: (key) => kv.get(key),
    list: (selector, options) => kv.list(selector as Deno.KvListSelector, options),
    atomic: () => {
      const op = kv.atomic();
      op.commit = () => Promise.reject(new TypeError("database is locked"));
      return op;
    },
    close: () => kv.close(),
  };
  try {
    const store = new KvEventStore(locked, { retryTimeoutMs: 50 });
    await assert.rejects(store.append("s", "x"), /database is locked/);
    assert.equal(await store.latestId("s"), 0);
  } finally {
    kv.close();
  }
});

Deno.test("every key of a session expires, the id counter after all its events, refreshed on append", async () => {
  // ExpiringKv records the expireIn each write asks for, on its own clock.
  const expiring = await ExpiringKv.open();
  try {
    const store = new KvEventStore(expiring, { ttlMs: 60_000, now: () => expiring.now });
    await store.append("s", "small");
    await store.append("s", "x".repeat(100_000)); // parts
    await store.append("s", "z".repeat(2_500_000)); // a blob
    const counter = ["anubis", "events", "s", "id"];
    const expiries = async () => {
      const keys = await Array.fromAsync(
        expiring.list({ prefix: ["anubis"] }),
        (e) => e.key as KvKey,
      );
      assert.ok(keys.length > 5);
      const deadlines = keys.map((key) => expiring.deadline(key));
      assert.ok(deadlines.every((d) => d !== undefined), "no key is kept forever");
      const others = keys.filter((k) => k.at(-1) !== "id").map((k) => expiring.deadline(k)!);
      return { counter: expiring.deadline(counter)!, events: Math.max(...others) };
    };
    const first = await expiries();
    assert.equal(first.counter - first.events, COUNTER_GRACE_MS, "the counter outlives the events");
    await expiring.advance(20);
    await store.append("s", "later");
    const second = await expiries();
    assert.equal(second.counter, first.counter + 20, "each append pushes the counter's expiry on");
    assert.equal(second.counter - second.events, COUNTER_GRACE_MS);
  } finally {
    expiring.close();
  }
});

Deno.test("a counter gone while events are still stored continues above them, never reusing an id", async () => {
  await withStore({}, async (store, kv) => {
    await store.append("s", "p".repeat(150_000)); // id 1, in three parts
    await store.append("s", "two");
    // What KV's expiry does to a counter whose events are still readable.
    await kv.atomic().delete(["anubis", "events", "s", "id"]).commit();
    assert.equal(await store.append("s", "three"), 3, "a stale cached counter is re-read");
    const events = await store.replay("s", 0);
    assert.deepEqual(ids(events), [1, 2, 3]);
    assert.equal(events[0].data, "p".repeat(150_000));
    assert.equal(events[2].data, "three");
    assert.equal(await new KvEventStore(kv).append("s", "four"), 4);
  });
});

Deno.test("a KvU64 counter from an older database is read and continued", async () => {
  await withStore({}, async (store, kv) => {
    await kv.atomic().set(["anubis", "events", "s", "id"], new Deno.KvU64(7n)).commit();
    assert.equal(await store.latestId("s"), 7);
    assert.equal(await store.append("s", "next"), 8);
    assert.equal(await store.latestId("s"), 8);
  });
});

/** A store on `expiring` whose clock is the database's; `tailing` polls slowly. */
function expiringStores(expiring: ExpiringKv, options: KvEventStoreOptions = {}) {
  const common = { ttlMs: 60_000, now: () => expiring.now, ...options };
  return {
    appending: new KvEventStore(expiring, common),
    tailing: new KvEventStore(expiring, { ...common, pollIntervalMs: 300 }),
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

Deno.test("a tail across a spell with no events longer than its events' life misses nothing: ids go on", async () => {
  const expiring = await ExpiringKv.open();
  const { appending, tailing } = expiringStores(expiring);
  const stop = new AbortController();
  try {
    await appending.append("s", "one");
    await appending.append("s", "two");
    const seen: StoredEvent[] = [];
    const tail = (async () => {
      for await (const event of tailing.tail("s", 0, stop.signal)) seen.push(event);
    })();
    while (seen.length < 2) await sleep(10);
    // Quiet for 4 minutes: every event has expired (a minute), the session
    // and its held stream have not.
    for (let i = 0; i < 4; i++) await expiring.advance(60_000);
    assert.equal(await countKeys(expiring, ["anubis", "events", "s", "ev"]), 0);
    // Two appends from another process, both before the tail's next poll.
    assert.deepEqual([await appending.append("s", "three"), await appending.append("s", "four")], [
      3,
      4,
    ]);
    while (seen.length < 4) await sleep(10);
    assert.deepEqual(seen.map((e) => `${e.id}:${e.data}`), ["1:one", "2:two", "3:three", "4:four"]);
    stop.abort();
    await tail;
  } finally {
    stop.abort();
    expiring.close();
  }
});

Deno.test("a client resuming with a Last-Event-ID from before a spell with no events gets what came after", async () => {
  const expiring = await ExpiringKv.open();
  const { appending } = expiringStores(expiring);
  try {
    await appending.append("s", "one");
    assert.equal(await appending.append("s", "two"), 2); // the client saw 2, then left
    for (let i = 0; i < 4; i++) await expiring.advance(60_000);
    await new KvEventStore(expiring, { ttlMs: 60_000, now: () => expiring.now }).append("s", "3");
    await appending.append("s", "4");
    assert.deepEqual(ids(await appending.replay("s", 2)), [3, 4]);
  } finally {
    expiring.close();
  }
});

Deno.test("a running tail keeps its session's counter alive; without one the counter expires", async () => {
  const expiring = await ExpiringKv.open();
  const options = { ttlMs: 60_000, counterTtlMs: 10 * 60_000, now: () => expiring.now };
  const store = new KvEventStore(expiring, { ...options, pollIntervalMs: 5 });
  const counter = ["anubis", "events", "followed", "id"];
  const stop = new AbortController();
  try {
    await store.append("followed", "a");
    await store.append("left", "a");
    const tail = (async () => {
      for await (const _ of store.tail("followed", 1, stop.signal));
    })();
    // An hour in minutes, each long enough for the tail to poll.
    for (let i = 0; i < 60; i++) {
      await expiring.advance(60_000);
      await sleep(15);
    }
    assert.notEqual((await expiring.get(counter)).value, null, "the followed counter is kept");
    assert.equal((await expiring.get(["anubis", "events", "left", "id"])).value, null, "no leak");
    assert.equal(await store.append("followed", "b"), 2);
    stop.abort();
    await tail;
  } finally {
    stop.abort();
    expiring.close();
  }
});

Deno.test("a tail starting reads the counter once before replaying: its renewal's read gives the latest id", async () => {
  const kv = await Deno.openKv(":memory:");
  let gets = 0;
  const counting: KvLike = {
    get: (key) => (gets += Number(key.at(-1) === "id"), kv.get(key)),
    list: (selector, options) => kv.list(selector as Deno.KvListSelector, options),
    atomic: () => kv.atomic(),
    close: () => kv.close(),
  };
  const stop = new AbortController();
  try {
    const store = new KvEventStore(counting, { pollIntervalMs: 60_000 });
    await store.append("s", "a");
    gets = 0;
    for await (const event of store.tail("s", 0, stop.signal)) {
      assert.deepEqual(event, { id: 1, data: "a" });
      stop.abort();
    }
    assert.equal(gets, 2, "the renewal's read, which gives the latest id, and replay's own");
  } finally {
    stop.abort();
    kv.close();
  }
});

Deno.test("the counter is a KvU64 that an older release, which adds with sum, goes on from", async () => {
  await withStore({}, async (store, kv) => {
    const key = ["anubis", "events", "s", "id"];
    await store.append("s", "one");
    const entry = await kv.get<Deno.KvU64>(key);
    assert.ok(entry.value instanceof Deno.KvU64);
    assert.equal(entry.value.value, 1n, "what an older release reads as latestId");
    // An older instance appends: sum under the versionstamp check.
    const older = await kv.atomic().check({ key, versionstamp: entry.versionstamp }).sum(key, 1n)
      .commit();
    assert.ok(older.ok, "no 'sum on a non-U64 value'");
    assert.equal(await store.append("s", "three"), 3, "the stale cached counter is re-read");
    assert.equal(await store.latestId("s"), 3);
  });
});

Deno.test("a counter stored as decimal digits (one release wrote them) is read, continued and made a KvU64", async () => {
  await withStore({}, async (store, kv) => {
    const key = ["anubis", "events", "s", "id"];
    await kv.atomic().set(key, new TextEncoder().encode("5")).commit();
    assert.equal(await store.latestId("s"), 5);
    assert.equal(await store.append("s", "six"), 6);
    const entry = await kv.get<Deno.KvU64>(key);
    assert.ok(entry.value instanceof Deno.KvU64);
    assert.equal(entry.value.value, 6n);
  });
});
