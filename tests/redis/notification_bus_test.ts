import assert from "node:assert/strict";
import { type BusMessage, Notifier } from "@anubis/core";
import { openRedis, RedisNotificationBus } from "@anubis/redis";
import { redisAvailable, startRedis } from "../helpers/redis_server.ts";

function test(name: string, fn: () => Promise<void>) {
  Deno.test({ name: `RedisNotificationBus: ${name}`, ignore: !redisAvailable, fn });
}

const until = async (check: () => boolean, ms = 5_000) => {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 10));
  }
};

test("a change raised on one instance reaches each other instance once, in order", async () => {
  const server = await startRedis();
  const connections = await Promise.all([1, 2, 3].map(() => openRedis(server.url)));
  const buses = connections.map((c) => new RedisNotificationBus(c, { pollIntervalMs: 60_000 }));
  try {
    for (const bus of buses) await bus.start();
    const notifiers = buses.map((bus) => {
      const notifier = new Notifier();
      notifier.connect(bus);
      return notifier;
    });
    const heard = notifiers.map(() => [] as string[]);
    notifiers.forEach((n, i) => n.subscribe((event) => void heard[i].push(event.type)));
    notifiers[0].toolsListChanged();
    notifiers[1].promptsListChanged();
    notifiers[0].resourcesListChanged();
    await until(() => heard[2].length === 3 && heard[1].length === 3 && heard[0].length === 3);
    await new Promise((r) => setTimeout(r, 200)); // nothing more arrives
    assert.deepEqual(heard[2], [
      "tools_list_changed",
      "prompts_list_changed",
      "resources_list_changed",
    ]);
    assert.deepEqual(heard[0].sort(), [
      "prompts_list_changed",
      "resources_list_changed",
      "tools_list_changed",
    ], "its own changes once (locally), the other's once (from the bus)");
    assert.equal(heard[1].length, 3);
  } finally {
    for (const bus of buses) await bus.close();
    for (const c of connections) c.close();
    await server.stop();
  }
});

test("messages of any JSON type travel on their own channel; close never hangs", async () => {
  const server = await startRedis();
  const redis = await openRedis(server.url);
  type Link = { session: string; instance: number };
  const a = new RedisNotificationBus<Link>(redis, { channel: "links" });
  const b = new RedisNotificationBus<Link>(redis, { channel: "links" });
  const changes = new RedisNotificationBus<BusMessage>(redis);
  try {
    await a.start();
    await b.start();
    await changes.start();
    const got: Link[] = [];
    b.subscribe((m) => got.push(m));
    changes.subscribe(() => assert.fail("another channel"));
    await a.publish({ session: "s1", instance: 1 });
    await until(() => got.length === 1);
    assert.deepEqual(got, [{ session: "s1", instance: 1 }]);
  } finally {
    await a.close();
    await b.close();
    await changes.close();
    redis.close();
    await server.stop();
  }
});

test("while Redis is down, publish settles and close returns; following resumes after", async () => {
  const server = await startRedis();
  const redis = await openRedis(server.url);
  const a = new RedisNotificationBus(redis, { commandTimeoutMs: 300, pollIntervalMs: 100 });
  const b = new RedisNotificationBus(redis, { commandTimeoutMs: 300, pollIntervalMs: 100 });
  try {
    await a.start();
    await b.start();
    const got: BusMessage[] = [];
    b.subscribe((m) => got.push(m));
    await server.kill();
    await a.publish({ event: { type: "tools_list_changed" }, delivered: [] }); // logged, dropped
    await server.restart();
    await until(() => redis.ping().then(() => true, () => false) !== undefined);
    const deadline = Date.now() + 10_000;
    while (got.length === 0 && Date.now() < deadline) {
      await a.publish({ event: { type: "prompts_list_changed" }, delivered: [] });
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.equal(got[0]?.event.type, "prompts_list_changed");
  } finally {
    const closed = Date.now();
    await a.close();
    await b.close();
    assert.ok(Date.now() - closed < 5_000, "close is bounded");
    redis.close();
    await server.stop();
  }
});
