import assert from "node:assert/strict";
import { McpError, RequestStateCodec } from "@anubis/core";
import { PREVIOUS_SECRET_WINDOW_MS } from "@anubis/core/kv";
import { openRedis, RedisRequestStateKeys } from "@anubis/redis";
import { redisAvailable, startRedis } from "../helpers/redis_server.ts";

const ignore = !redisAvailable;
const payload = { method: "tools/call", target: "t", answers: {}, round: 1 };

Deno.test({
  name: "redis requestState keys: instances agree on one secret; rotation keeps rounds in flight",
  ignore,
  async fn() {
    const server = await startRedis();
    const [ra, rb] = [await openRedis(server.url), await openRedis(server.url)];
    try {
      const all = await Promise.all(
        Array.from({ length: 8 }, (_, i) => new RedisRequestStateKeys(i % 2 ? ra : rb).load()),
      );
      for (const keys of all) assert.deepEqual(keys.secret, all[0].secret);
      assert.deepEqual(all[0].previousSecrets, []);

      let now = Date.now();
      const options = { rotateAfterMs: 60_000, now: () => now };
      const [a, b] = [new RequestStateCodec(), new RequestStateCodec()];
      const keysA = new RedisRequestStateKeys(ra, options);
      const keysB = new RedisRequestStateKeys(rb, options);
      const stopA = await keysA.attach(a, 3_600_000);
      const stopB = await keysB.attach(b, 3_600_000);
      const early = await a.seal(payload);
      assert.equal((await b.open(early, "tools/call", "t")).round, 1);

      now += 61_000; // stale: the next loads rotate once, and both agree
      const [rotatedA, rotatedB] = await Promise.all([keysA.load(), keysB.load()]);
      assert.deepEqual(rotatedA, rotatedB);
      assert.equal(rotatedA.previousSecrets!.length, 1);
      await a.useKeys(rotatedA);
      // B has not refreshed: a state A signs with the new secret makes B reload.
      assert.equal((await b.open(await a.seal(payload), "tools/call", "t")).round, 1);
      assert.equal((await a.open(early, "tools/call", "t")).round, 1, "in flight before rotation");

      now += PREVIOUS_SECRET_WINDOW_MS; // the window is over: the old secret is dropped
      await a.useKeys(await keysA.load());
      await assert.rejects(a.open(early, "tools/call", "t"), McpError);
      const rotated = await keysB.rotate();
      assert.notDeepEqual(rotated.secret, rotatedA.secret);
      stopA();
      stopB();

      // An unreadable record is replaced, never trusted.
      await new RedisRequestStateKeys(ra, { key: "odd" }).load();
      const { clientOf } = await import("../../redis/_client.ts");
      await clientOf(ra).set("odd", "not json");
      const replaced = await new RedisRequestStateKeys(rb, { key: "odd" }).load();
      assert.equal((replaced.secret as Uint8Array).length, 32);
      assert.deepEqual(await new RedisRequestStateKeys(ra, { key: "odd" }).load(), replaced);
    } finally {
      ra.close();
      rb.close();
      await server.stop();
    }
  },
});
