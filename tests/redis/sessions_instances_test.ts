/**
 * Legacy sessions across HTTP instances on one Redis: a session made at one
 * instance is served by another, and by a fresh instance after Redis itself
 * was killed and restarted (AOF on).
 */

import assert from "node:assert/strict";
import { openRedis, RedisSessionStore } from "@anubis/redis";
import { initialize, post, start } from "../helpers/http_helpers.ts";
import { redisAvailable, startRedis } from "../helpers/redis_server.ts";

const VERSION = "2025-11-25";

async function echo(url: string, sessionId: string, text: string): Promise<Response> {
  return await post(
    url,
    { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "echo", arguments: { text } } },
    { "mcp-session-id": sessionId, "mcp-protocol-version": VERSION },
  );
}

async function text(response: Response): Promise<string> {
  const body = await response.text();
  const json = body.startsWith("{") ? body : body.split("\n").find((l) => l.startsWith("data: "))!
    .slice(6);
  return JSON.stringify(JSON.parse(json).result?.content ?? JSON.parse(json).error);
}

Deno.test({
  name: "redis sessions: served by another instance, and after a Redis restart with AOF",
  ignore: !redisAvailable,
  async fn() {
    const server = await startRedis({ aof: true });
    const [ra, rb] = [await openRedis(server.url), await openRedis(server.url)];
    const a = start({ sessionStore: new RedisSessionStore(ra) });
    const b = start({ sessionStore: new RedisSessionStore(rb) });
    try {
      const sessionId = await initialize(a.url, VERSION);
      const atB = await echo(b.url, sessionId, "moved");
      assert.equal(atB.status, 200);
      assert.match(await text(atB), /moved/);
      const unknown = await echo(b.url, "no-such-session", "x");
      assert.equal(unknown.status, 404);
      await unknown.body?.cancel();

      await server.kill();
      await server.restart();
      // A fresh instance on a new connection restores the session from the restarted Redis.
      const rc = await openRedis(server.url);
      const c = start({ sessionStore: new RedisSessionStore(rc) });
      try {
        const atC = await echo(c.url, sessionId, "after restart");
        assert.equal(atC.status, 200);
        assert.match(await text(atC), /after restart/);
      } finally {
        await c.close();
        rc.close();
      }
    } finally {
      await a.close();
      await b.close();
      ra.close();
      rb.close();
      await server.stop();
    }
  },
});
