import assert from "node:assert/strict";
import { TaskLimitError, type TaskRecord } from "@anubis/core";
import { taskStoreContract } from "@anubis/testing";
import { openRedis, RedisTaskStore } from "@anubis/redis";
import { redisAvailable, startRedis } from "../helpers/redis_server.ts";

const ignore = !redisAvailable;

// The contract against a real redis-server, one per case.
for (
  const c of taskStoreContract(async () => {
    const server = await startRedis();
    const redis = await openRedis(server.url);
    return {
      store: new RedisTaskStore(redis),
      close: async () => {
        redis.close();
        await server.stop();
      },
    };
  })
) Deno.test({ name: `redis ${c.name}`, ignore, fn: c.fn });

function task(id: string, owner: string, ttlMs: number | null = null): TaskRecord {
  const now = Date.now();
  return {
    v: 1,
    id,
    owner,
    method: "tools/call",
    status: "working",
    createdAt: now,
    updatedAt: now,
    ttlMs,
    expiresAt: ttlMs === null ? null : now + ttlMs,
  };
}

async function withStores(
  options: ConstructorParameters<typeof RedisTaskStore>[1],
  body: (a: RedisTaskStore, b: RedisTaskStore) => Promise<void>,
): Promise<void> {
  const server = await startRedis();
  const [ra, rb] = [await openRedis(server.url), await openRedis(server.url)];
  try {
    await body(new RedisTaskStore(ra, options), new RedisTaskStore(rb, options));
  } finally {
    ra.close();
    rb.close();
    await server.stop();
  }
}

Deno.test({
  name: "redis task store: created at one instance, polled and cancelled through another",
  ignore,
  fn: () =>
    withStores({}, async (a, b) => {
      await a.create(task("t1", "session:x", 60_000));
      const lease = { holder: "instance-a", expiresAt: Date.now() + 10_000 };
      assert.deepEqual(await a.renew(["t1"], lease), ["working"]);
      const polled = await b.get("t1");
      assert.equal(polled?.status, "working");
      assert.deepEqual(polled?.lease, lease);
      await b.update("t1", { status: "input_required", inputRequests: { q: {} } });
      assert.equal((await a.get("t1"))?.status, "input_required");
      const cancelled = await b.finish("t1", { status: "cancelled", statusMessage: "by b" });
      assert.equal(cancelled?.status, "cancelled");
      assert.equal(cancelled?.lease, undefined);
      // The running instance's next lease sweep learns it, and cannot revive the task.
      assert.deepEqual(await a.renew(["t1", "unknown"], lease), ["cancelled", undefined]);
      const late = await a.finish("t1", { status: "completed", result: { content: [] } });
      assert.equal(late?.status, "cancelled");
      assert.equal(late?.statusMessage, "by b");
      assert.deepEqual((await b.list("session:x")).tasks.map((t) => t.id), ["t1"]);
      assert.deepEqual((await b.list("session:y")).tasks, []);
    }),
});

Deno.test({
  name: "redis task store: bounds are shared by instances and refuse with TaskLimitError",
  ignore,
  fn: () =>
    withStores({ maxTasks: 4, maxTasksPerCaller: 2 }, async (a, b) => {
      await a.create(task("a1", "session:a", 300));
      await b.create(task("a2", "session:a", 300));
      const held = await a.create(task("a3", "session:a")).catch((e) => e);
      assert.ok(held instanceof TaskLimitError, String(held));
      assert.equal(held.scope, "caller");
      assert.equal(held.limit, 2);
      assert.equal(await a.get("a3"), undefined);
      await b.create(task("b1", "session:b"));
      await a.create({ ...task("c1", "anonymous"), caller: "client:10.0.0.7" });
      const full = await b.create(task("d1", "session:d")).catch((e) => e);
      assert.ok(full instanceof TaskLimitError, String(full));
      assert.equal(full.scope, "total");
      assert.equal(full.limit, 4);
      assert.equal(await a.count(), 4);
      assert.equal(await b.heldBy("client:10.0.0.7"), 1);
      // Concurrent creations at two instances cannot pass the total together.
      await b.delete("b1");
      const raced = await Promise.allSettled([
        a.create(task("r1", "session:r1")),
        b.create(task("r2", "session:r2")),
      ]);
      assert.equal(raced.filter((r) => r.status === "fulfilled").length, 1);
      // Expired tasks leave the counts.
      await new Promise((resolve) => setTimeout(resolve, 400));
      await a.create(task("a3", "session:a"));
      await b.create(task("d1", "session:d"));
      assert.equal(await b.heldBy("session:a"), 1);
      await assert.rejects(
        a.create({ ...task("big", "session:z"), statusMessage: "x".repeat(2 * 1024 * 1024) }),
        RangeError,
      );
    }),
});

Deno.test({
  name: "redis task store: tasks survive a Redis restart with AOF, and scripts load again",
  ignore,
  async fn() {
    const server = await startRedis({ aof: true });
    let redis = await openRedis(server.url);
    try {
      await new RedisTaskStore(redis).create(task("t1", "o", 60_000));
      redis.close();
      await server.kill();
      await server.restart();
      redis = await openRedis(server.url);
      const store = new RedisTaskStore(redis);
      assert.equal((await store.get("t1"))?.status, "working");
      const lease = { holder: "b", expiresAt: Date.now() + 5_000 };
      assert.deepEqual(await store.renew(["t1"], lease), ["working"]);
      assert.equal((await store.finish("t1", { status: "cancelled" }))?.status, "cancelled");
    } finally {
      redis.close();
      await server.stop();
    }
  },
});

Deno.test({
  name: "redis task store: a caller's and an owner's index keys go when their last task expires",
  ignore,
  async fn() {
    const server = await startRedis();
    const redis = await openRedis(server.url);
    const { clientOf } = await import("../../redis/_client.ts");
    const raw = clientOf(redis);
    try {
      const store = new RedisTaskStore(redis);
      await store.create(task("short", "session:s", 200));
      await store.create(task("kept", "session:k", null));
      await store.create(task("longer", "session:k", 200)); // does not shorten an unlimited index
      await new Promise((resolve) => setTimeout(resolve, 350));
      assert.equal(await raw.exists("{anubis:tasks}:c:session:s"), 0);
      assert.equal(await raw.exists("{anubis:tasks}:o:session:s"), 0);
      assert.equal(await raw.exists("{anubis:tasks}:t:short"), 0);
      assert.equal(await raw.pTTL("{anubis:tasks}:o:session:k"), -1);
      assert.deepEqual((await store.list("session:k")).tasks.map((t) => t.id), ["kept"]);
      assert.equal(await store.heldBy("session:k"), 1);
      assert.equal(await store.count(), 1);
    } finally {
      redis.close();
      await server.stop();
    }
  },
});

Deno.test({
  name: "redis task store: renew goes through many tasks in batches, in order",
  ignore,
  fn: () =>
    withStores({ maxTasks: 10_000, maxTasksPerCaller: 10_000 }, async (a, b) => {
      const ids = Array.from({ length: 1_203 }, (_, i) => `t${i}`);
      for (const id of ids) await a.create(task(id, "session:many", 60_000));
      await b.finish("t700", { status: "cancelled" });
      const lease = { holder: "a", expiresAt: Date.now() + 15_000 };
      const statuses = await a.renew([...ids, "gone"], lease);
      assert.equal(statuses.length, 1_204);
      assert.equal(statuses[700], "cancelled");
      assert.equal(statuses[1_203], undefined);
      assert.equal(statuses.filter((s) => s === "working").length, 1_202);
      assert.deepEqual((await b.get("t1202"))?.lease, lease);
      assert.equal((await b.get("t700"))?.lease, undefined);
    }),
});
