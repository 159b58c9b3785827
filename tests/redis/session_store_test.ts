import assert from "node:assert/strict";
import type { SessionRecord } from "@anubis/core";
import { sessionStoreContract } from "@anubis/testing";
import { openRedis, RedisSessionStore, RedisStoreFullError } from "@anubis/redis";
import { redisAvailable, startRedis } from "../helpers/redis_server.ts";

const ignore = !redisAvailable;
let cases = 0;

// The contract against one real redis-server, each case on its own key prefix.
for (
  const c of sessionStoreContract(async () => {
    const server = await startRedis();
    const redis = await openRedis(server.url);
    return {
      store: new RedisSessionStore(redis, { prefix: `{case${cases++}}:` }),
      close: async () => {
        redis.close();
        await server.stop();
      },
    };
  })
) Deno.test({ name: `redis ${c.name}`, ignore, fn: c.fn });

function record(id: string, assigns: SessionRecord["assigns"] = {}): SessionRecord {
  return {
    v: 1,
    id,
    protocolVersion: "2025-11-25",
    clientInfo: { name: "c", version: "1" },
    clientCapabilities: {},
    initialized: true,
    subscriptions: [],
    assigns,
    updatedAt: 1,
  };
}

Deno.test({
  name: "redis session store: bounds refuse a large record and sessions past the shared total",
  ignore,
  async fn() {
    const server = await startRedis();
    const [a, b] = [await openRedis(server.url), await openRedis(server.url)];
    try {
      const options = { maxSessions: 2, maxRecordBytes: 2_000 };
      const one = new RedisSessionStore(a, options);
      const two = new RedisSessionStore(b, options); // another instance, same Redis
      await assert.rejects(one.save(record("big", { x: "x".repeat(3_000) }), 60_000), RangeError);
      await one.save(record("s1"), 60_000);
      await two.save(record("s2"), 300);
      const full = await one.save(record("s3"), 60_000).catch((e) => e);
      assert.ok(full instanceof RedisStoreFullError, String(full));
      assert.equal(full.limit, 2);
      await two.save(record("s1", { n: 2 }), 60_000); // rewriting a held session is no new one
      assert.deepEqual((await one.load("s1"))?.assigns, { n: 2 });
      assert.equal(await one.count(), 2);
      // Expired and deleted sessions leave the count.
      await new Promise((resolve) => setTimeout(resolve, 400));
      await one.save(record("s3"), 60_000);
      await two.delete("s1");
      await two.save(record("s4"), 60_000);
      const ids = [];
      for await (const r of one.records()) ids.push(r.id);
      assert.deepEqual(ids.sort(), ["s3", "s4"]);
      await assert.rejects(one.save(record("bad", { m: new Map() as never }), 60_000), TypeError);
    } finally {
      a.close();
      b.close();
      await server.stop();
    }
  },
});

Deno.test({
  name: "redis session store: sessions move between instances and survive a Redis restart (AOF)",
  ignore,
  async fn() {
    const server = await startRedis({ aof: true });
    const a = await openRedis(server.url);
    let b = await openRedis(server.url);
    try {
      await new RedisSessionStore(a).save(record("kept", { userId: 7 }), 60_000);
      assert.deepEqual((await new RedisSessionStore(b).load("kept"))?.assigns, { userId: 7 });
      a.close();
      b.close();
      await server.kill();
      await server.restart();
      b = await openRedis(server.url);
      const store = new RedisSessionStore(b);
      assert.deepEqual((await store.load("kept"))?.assigns, { userId: 7 });
      await store.touch("kept", 60_000); // scripts load again on the restarted server
      assert.equal(await store.count(), 1);
    } finally {
      b.close();
      await server.stop();
    }
  },
});

Deno.test({
  name: "redis session store: a command rejects within its timeout while Redis is down",
  ignore,
  async fn() {
    const server = await startRedis();
    const redis = await openRedis(server.url, { maxReconnectDelayMs: 200 });
    try {
      const store = new RedisSessionStore(redis, { commandTimeoutMs: 300 });
      await store.save(record("s"), 60_000);
      await server.kill();
      await assert.rejects(store.load("s"), /did not answer GET within 300 ms|closed|ECONNREFUSED/);
      await server.restart();
      // Back once reconnected (bounded wait).
      let answered = false;
      let loaded: SessionRecord | undefined;
      for (let i = 0; i < 100 && !answered; i++) {
        try {
          loaded = await store.load("s");
          answered = true;
        } catch {
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
      assert.ok(answered);
      assert.equal(loaded, undefined); // no AOF: the restarted Redis is empty, and answers
      assert.equal(await store.count(), 0);
    } finally {
      redis.close();
      await server.stop();
    }
  },
});
