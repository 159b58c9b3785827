import assert from "node:assert/strict";
import { openRedis, RedisRateLimitStore } from "@anubis/redis";
import { redisAvailable, startRedis } from "../helpers/redis_server.ts";

const ignore = !redisAvailable;

Deno.test({
  name: "redis rate limit store: one bucket per caller, shared by two instances",
  ignore,
  async fn() {
    const server = await startRedis();
    const [ra, rb] = [await openRedis(server.url), await openRedis(server.url)];
    try {
      let now = 1_000_000;
      const clock = { now: () => now };
      const a = new RedisRateLimitStore(ra, clock);
      const b = new RedisRateLimitStore(rb, clock);
      const limit = { perSecond: 10, burst: 3 };
      // The burst is spent across both instances, however the takes are spread.
      assert.equal(await a.take("ada", limit), 0);
      assert.equal(await b.take("ada", limit), 0);
      assert.equal(await a.take("ada", limit), 0);
      assert.equal(await b.take("ada", limit), 100);
      assert.equal(await a.take("ada", limit), 100);
      assert.equal(await b.take("eve", limit), 0); // another caller, another bucket
      now += 100; // one token's time
      assert.equal(await b.take("ada", limit), 0);
      assert.equal(await a.take("ada", limit), 100);
      // Many takes at once from both: exactly the burst goes.
      const limit2 = { perSecond: 1, burst: 5 };
      const waits = await Promise.all(
        Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).take("zoe", limit2)),
      );
      assert.equal(waits.filter((w) => w === 0).length, 5);
      // Redis's clock by default: still one shared bucket.
      const [c, d] = [new RedisRateLimitStore(ra), new RedisRateLimitStore(rb)];
      const slow = { perSecond: 0.5, burst: 1 };
      assert.equal(await c.take("max", slow), 0);
      const wait = await d.take("max", slow);
      assert.ok(wait > 1_000 && wait <= 2_000, String(wait));
      await assert.rejects(c.take("max", { perSecond: 0, burst: 1 }), RangeError);
    } finally {
      ra.close();
      rb.close();
      await server.stop();
    }
  },
});

Deno.test({
  name: "redis rate limit store: a take rejects (fails closed) while Redis is down",
  ignore,
  async fn() {
    const server = await startRedis();
    const redis = await openRedis(server.url, { maxReconnectDelayMs: 200 });
    try {
      const store = new RedisRateLimitStore(redis, { commandTimeoutMs: 300 });
      assert.equal(await store.take("ada", { perSecond: 1, burst: 1 }), 0);
      await server.kill();
      await assert.rejects(store.take("ada", { perSecond: 1, burst: 1 }));
    } finally {
      redis.close();
      await server.stop();
    }
  },
});

Deno.test({
  name: "redis rate limit store: two HTTP instances share one caller's budget",
  ignore,
  async fn() {
    const { start, post, headers2026, request2026 } = await import("../helpers/http_helpers.ts");
    const server = await startRedis();
    const [ra, rb] = [await openRedis(server.url), await openRedis(server.url)];
    const rateLimit = (redis: typeof ra) => ({
      perSecond: 0.01,
      burst: 3,
      store: new RedisRateLimitStore(redis),
    });
    const a = start({ rateLimit: rateLimit(ra) });
    const b = start({ rateLimit: rateLimit(rb) });
    try {
      const statuses = [];
      for (let i = 0; i < 5; i++) {
        const url = (i % 2 ? b : a).url;
        const response = await post(
          url,
          request2026(i, "tools/call", { name: "echo", arguments: { text: "hi" } }),
          headers2026("tools/call", "echo"),
        );
        statuses.push(response.status);
        await response.body?.cancel();
      }
      assert.deepEqual(statuses, [200, 200, 200, 429, 429]);
    } finally {
      await a.close();
      await b.close();
      ra.close();
      rb.close();
      await server.stop();
    }
  },
});

Deno.test({
  name: "redis rate limit store: scripts flushed from Redis are loaded again (NOSCRIPT)",
  ignore,
  async fn() {
    const { clientOf } = await import("../../redis/_client.ts");
    const server = await startRedis();
    const redis = await openRedis(server.url);
    try {
      const store = new RedisRateLimitStore(redis);
      assert.equal(await store.take("ada", { perSecond: 1, burst: 2 }), 0);
      await clientOf(redis).scriptFlush();
      assert.equal(await store.take("ada", { perSecond: 1, burst: 2 }), 0);
      assert.ok(await store.take("ada", { perSecond: 1, burst: 2 }) > 0);
    } finally {
      redis.close();
      await server.stop();
    }
  },
});
