import assert from "node:assert/strict";
import { openRedis, RedisUnavailableError } from "./mod.ts";
import { redisAvailable, startRedis } from "../tests/helpers/redis_server.ts";

Deno.test({
  name: "openRedis connects to a real redis-server and fails clearly when none listens",
  ignore: !redisAvailable,
  async fn() {
    const server = await startRedis();
    try {
      const client = await openRedis(server.url);
      assert.equal(await client.ping(), "PONG");
      client.close();
      await server.stop();
      const error = await openRedis(server.url, { connectTimeoutMs: 1_000 }).catch((e) => e);
      assert.ok(error instanceof RedisUnavailableError, String(error));
      assert.match(error.message, new RegExp(`127\\.0\\.0\\.1:${server.port}`));
    } finally {
      await server.stop();
    }
  },
});

Deno.test("openRedis refuses a URL that is not redis:// or rediss://", async () => {
  await assert.rejects(openRedis("http://127.0.0.1:6379"), /redis:\/\/ or rediss:\/\//);
});
