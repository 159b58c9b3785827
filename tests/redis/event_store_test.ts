import assert from "node:assert/strict";
import { eventStoreContract } from "@anubis/testing";
import type { StoredEvent } from "@anubis/core";
import { openRedis, type RedisConnection, RedisEventStore } from "@anubis/redis";
import type { RedisEventStoreOptions } from "@anubis/redis";
import { redisAvailable, type RedisServer, startRedis } from "../helpers/redis_server.ts";

for (
  const c of eventStoreContract(async () => {
    const server = await startRedis();
    const redis = await openRedis(server.url);
    const store = new RedisEventStore(redis);
    return {
      store,
      async close() {
        await store.close();
        redis.close();
        await server.stop();
      },
    };
  })
) {
  Deno.test({ name: `redis ${c.name}`, ignore: !redisAvailable, fn: c.fn });
}

async function withStore(
  options: RedisEventStoreOptions,
  body: (store: RedisEventStore, redis: RedisConnection, server: RedisServer) => Promise<void>,
): Promise<void> {
  const server = await startRedis();
  const redis = await openRedis(server.url);
  const store = new RedisEventStore(redis, options);
  try {
    await body(store, redis, server);
  } finally {
    await store.close();
    redis.close();
    await server.stop();
  }
}

const ids = (events: StoredEvent[]) => events.map((e) => e.id);

function test(name: string, fn: () => Promise<void>) {
  Deno.test({ name: `RedisEventStore: ${name}`, ignore: !redisAvailable, fn });
}

test("retention by count drops the oldest at once and leaves a visible gap", async () => {
  await withStore({ maxEventsPerSession: 3 }, async (store) => {
    for (let i = 1; i <= 10; i++) await store.append("s", `e${i}`);
    assert.deepEqual(ids(await store.replay("s", 0)), [8, 9, 10]);
    assert.deepEqual(ids(await store.replay("s", 2)), [8, 9, 10], "ids 3..7 are gone: a gap");
    assert.deepEqual(ids(await store.replay("s", 9)), [10]);
    assert.equal(await store.latestId("s"), 10);
  });
});

test("retention by bytes drops the oldest events, never the one just appended", async () => {
  await withStore({ maxBytesPerSession: 100 }, async (store) => {
    for (let i = 0; i < 5; i++) await store.append("s", "x".repeat(40));
    assert.deepEqual(ids(await store.replay("s", 0)), [4, 5]);
    await store.append("s", "y".repeat(150)); // alone over the bound: kept alone
    assert.deepEqual(ids(await store.replay("s", 0)), [6]);
  });
});

test("an event over maxEventBytes is refused, and nothing is recorded", async () => {
  await withStore({ maxEventBytes: 10 }, async (store) => {
    await assert.rejects(store.append("s", "é".repeat(6)), RangeError); // 12 bytes
    assert.equal(await store.latestId("s"), 0);
    assert.equal(await store.append("s", "é".repeat(5)), 1);
  });
});

test("events older than ttlMs are not replayed", async () => {
  let now = 1_000_000;
  await withStore({ ttlMs: 1_000, now: () => now }, async (store) => {
    await store.append("s", "old");
    now += 600;
    await store.append("s", "new");
    now += 600;
    assert.deepEqual(ids(await store.replay("s", 0)), [2]);
    assert.equal(await store.latestId("s"), 2, "the counter outlives the events");
  });
});

test("a tail on one connection sees appends through another at once, and ends on delete", async () => {
  await withStore({ pollIntervalMs: 60_000 }, async (store, redis) => {
    const other = await redis.duplicate();
    const writer = new RedisEventStore(other);
    try {
      await writer.append("s", "before");
      const stop = new AbortController();
      const seen: StoredEvent[] = [];
      const tailing = (async () => {
        for await (const event of store.tail("s", 0, stop.signal)) {
          seen.push(event);
          if (event.id === 3) await writer.delete("s");
        }
      })();
      // The poll is a minute away: only pub/sub can wake the tail in time.
      await new Promise((r) => setTimeout(r, 100));
      await writer.append("s", "two");
      await writer.append("s", "three");
      await tailing; // ends by itself once the session is deleted
      assert.deepEqual(seen.map((e) => e.data), ["before", "two", "three"]);
      stop.abort();
    } finally {
      await writer.close();
      other.close();
    }
  });
});

test("while Redis is down, commands reject within commandTimeoutMs; delete fails closed", async () => {
  await withStore({ commandTimeoutMs: 500 }, async (store, _redis, server) => {
    await store.append("s", "kept");
    await server.kill();
    await assert.rejects(store.append("s", "lost"));
    await assert.rejects(store.delete("s"));
    await assert.rejects(store.replay("s", 0));
    await server.restart(); // no AOF: the data is gone, but the store works again
    const deadline = Date.now() + 10_000;
    while (true) {
      try {
        assert.equal(await store.append("s", "again"), 1);
        break;
      } catch (error) {
        if (Date.now() > deadline) throw error;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  });
});

test("heartbeats are per owner and apart from sessions", async () => {
  await withStore({}, async (store) => {
    await store.heartbeat("o");
    const token = await store.lastHeartbeat("o");
    assert.equal(typeof token, "string");
    assert.equal(await store.latestId("o"), 0);
  });
});
