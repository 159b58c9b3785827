import assert from "node:assert/strict";
import type { SessionRecord } from "@anubis/core";
import { sessionStoreContract } from "@anubis/testing";
import { KvSessionStore } from "./kv_session_store.ts";
import { tempKv } from "../core/kv/testdata/temp_kv.ts";

for (
  const c of sessionStoreContract(async () => {
    const { kv, close } = await tempKv("sessions.kv");
    return { store: new KvSessionStore(kv), close };
  })
) {
  Deno.test(c.name, c.fn);
}

function record(
  id: string,
  assigns: SessionRecord["assigns"] = {},
): SessionRecord {
  return {
    v: 1,
    id,
    protocolVersion: "2025-06-18",
    clientInfo: { name: "inspector", version: "0.9.0" },
    clientCapabilities: { roots: { listChanged: true } },
    initialized: true,
    logLevel: "warning",
    subscriptions: ["file:///a", "file:///b"],
    assigns,
    updatedAt: 42,
  };
}

async function withStore(
  body: (
    store: KvSessionStore,
    kv: Deno.Kv,
    clock: { now: number },
  ) => Promise<void>,
): Promise<void> {
  const { kv, close } = await tempKv("sessions.kv");
  const clock = { now: 1_000_000 };
  try {
    await body(new KvSessionStore(kv, { now: () => clock.now }), kv, clock);
  } finally {
    await close();
  }
}

async function keysUnder(
  kv: Deno.Kv,
  prefix: Deno.KvKey,
): Promise<Deno.KvKey[]> {
  const keys: Deno.KvKey[] = [];
  for await (const entry of kv.list({ prefix })) keys.push(entry.key);
  return keys;
}

Deno.test("a record that is not JSON-safe is refused, naming the assign", async () => {
  await withStore(async (store) => {
    await assert.rejects(
      store.save(record("s", { db: new Map() as never }), 60_000),
      { name: "TypeError", message: "assigns.db is not JSON-safe (a Map)" },
    );
    await assert.rejects(
      store.save(record("s", { user: { seen: new Date() as never } }), 60_000),
      { message: "assigns.user.seen is not JSON-safe (a Date)" },
    );
    await assert.rejects(
      store.save(record("s", { n: NaN }), 60_000),
      /assigns\.n/,
    );
    assert.equal(await store.load("s"), undefined, "nothing was written");
  });
});

Deno.test("records are bytes, large ones are split, and shrinking drops stale parts", async () => {
  await withStore(async (store, kv) => {
    const big = record("s", { blob: "ü".repeat(150_000) }); // ~300 KB of JSON
    await store.save(big, 60_000);
    assert.deepEqual(await store.load("s"), big);
    const keys = await keysUnder(kv, ["anubis", "sessions"]);
    assert.ok(keys.length > 4);
    for (const key of keys) {
      assert.ok((await kv.get(key)).value instanceof Uint8Array);
    }

    await store.save(record("s", { small: true }), 60_000);
    assert.deepEqual((await store.load("s"))?.assigns, { small: true });
    assert.deepEqual(await keysUnder(kv, ["anubis", "sessions"]), [[
      "anubis",
      "sessions",
      "s",
    ]]);

    await store.save(big, 60_000);
    await store.delete("s");
    assert.deepEqual(await keysUnder(kv, ["anubis", "sessions"]), []);
  });
});

Deno.test("a record too large for one commit is refused", async () => {
  await withStore(async (store) => {
    await assert.rejects(
      store.save(record("s", { blob: "x".repeat(1_000_000) }), 60_000),
      RangeError,
    );
  });
});

Deno.test("expiry is checked on read and touch slides it", async () => {
  await withStore(async (store, _kv, clock) => {
    await store.save(record("a"), 1_000);
    await store.save(record("b"), 1_000);
    clock.now += 900;
    await store.touch("b", 1_000);
    clock.now += 200;
    assert.equal(
      await store.load("a"),
      undefined,
      "expired although KV still holds it",
    );
    assert.equal((await store.load("b"))?.id, "b");
    await store.touch("a", 1_000);
    assert.equal(
      await store.load("a"),
      undefined,
      "touch does not revive an expired record",
    );
  });
});

Deno.test("ids are key parts of their own and prefixes separate stores", async () => {
  await withStore(async (store, kv) => {
    await store.save(record("a"), 60_000);
    await store.save(
      record("a", { n: 1 }).id === "a" ? record("a/b") : record("x"),
      60_000,
    );
    assert.equal((await store.load("a/b"))?.id, "a/b");
    await store.delete("a");
    assert.equal((await store.load("a/b"))?.id, "a/b");
    const other = new KvSessionStore(kv, { prefix: ["other"] });
    assert.equal(await other.load("a/b"), undefined);
  });
});

Deno.test("concurrent saves and touches leave one whole record", async () => {
  await withStore(async (store) => {
    const versions = Array.from(
      { length: 10 },
      (_, i) => record("s", { i, pad: "p".repeat(70_000 * (i % 3)) }),
    );
    await Promise.all([
      ...versions.map((v) => store.save(v, 60_000)),
      ...versions.map(() => store.touch("s", 60_000)),
    ]);
    const loaded = await store.load("s");
    assert.ok(loaded);
    assert.deepEqual(loaded, versions[loaded.assigns.i as number]);
  });
});

Deno.test("invalid ttl is rejected", async () => {
  await withStore(async (store) => {
    await assert.rejects(store.save(record("s"), 0), RangeError);
    await assert.rejects(store.touch("s", Infinity), RangeError);
  });
});

Deno.test("records() lists the live records, big ones whole, expired ones not", async () => {
  await withStore(async (store, _kv, clock) => {
    const big = record("big", { blob: "x".repeat(200_000) });
    await store.save(record("a"), 1_000);
    await store.save(big, 10_000);
    await store.save(record("c"), 10_000);
    clock.now += 2_000;
    const listed: SessionRecord[] = [];
    for await (const r of store.records()) listed.push(r);
    assert.deepEqual(listed.map((r) => r.id), ["big", "c"]);
    assert.deepEqual(listed[0], big);
  });
});
