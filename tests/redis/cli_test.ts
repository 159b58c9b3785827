/**
 * `cli serve --http --redis URL`: the flags' rules, a clear exit when Redis
 * is unreachable at start, ACL credentials from the URL or the environment,
 * and operator events when Redis drops while serving.
 */

import assert from "node:assert/strict";
import { parseArgs } from "../../cli/_args.ts";
import { startHttpServer } from "../helpers/everything_http_server.ts";
import { initialize } from "../helpers/http_helpers.ts";
import { redisAvailable, startRedis } from "../helpers/redis_server.ts";

const ROOT = new URL("../..", import.meta.url).pathname;

/** Sends one inline command to Redis on `port` and returns the first reply line. */
async function redisCommand(port: number, line: string): Promise<string> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    await conn.write(new TextEncoder().encode(`${line}\r\n`));
    const buffer = new Uint8Array(256);
    const n = await conn.read(buffer);
    return new TextDecoder().decode(buffer.subarray(0, n ?? 0)).trim();
  } finally {
    conn.close();
  }
}

async function runCli(args: string[], env: Record<string, string> = {}) {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "cli/main.ts", "serve", "examples/everything.ts", ...args],
    cwd: ROOT,
    env,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).output();
  return { code: output.code, stderr: new TextDecoder().decode(output.stderr) };
}

Deno.test("cli --redis: needs --http, a redis URL, and no KV store flag beside it", () => {
  const error = (args: string[]) => {
    const parsed = parseArgs(["serve", "s.ts", ...args]);
    return parsed.kind === "error" ? parsed.message : undefined;
  };
  assert.match(error(["--redis", "redis://127.0.0.1:6380"])!, /--redis needs --http/);
  assert.match(error(["--http", "--redis", "http://x"])!, /redis:\/\/ or rediss:\/\//);
  assert.match(
    error(["--http", "--redis", "redis://h:1", "--event-store", "memory"])!,
    /drop --event-store/,
  );
  assert.match(
    error(["--http", "--redis", "redis://h:1", "--session-store", "kv"])!,
    /--redis keeps the streams, sessions and tasks on Redis: drop --session-store$/,
  );
  assert.match(
    error(["--http", "--redis", "redis://h:1", "--task-store", "memory", "--event-store", "kv"])!,
    /drop --event-store and --task-store$/,
  );
  const parsed = parseArgs(["serve", "s.ts", "--http", "--redis", "rediss://u:p@h:6380/1"]);
  assert.equal(parsed.kind === "serve" && parsed.options.redis, "rediss://u:p@h:6380/1");
});

Deno.test({
  name: "cli --redis: Redis unreachable at start: a clear error and exit 1",
  ignore: !redisAvailable,
  async fn() {
    const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const port = (listener.addr as Deno.NetAddr).port;
    listener.close(); // nothing listens there now
    const { code, stderr } = await runCli([
      "--http",
      "--port",
      "0",
      "--redis",
      `redis://app:hunter2@127.0.0.1:${port}`,
    ]);
    assert.equal(code, 1, stderr);
    assert.match(
      stderr,
      new RegExp(`Redis at redis://app:\\*\\*\\*@127\\.0\\.0\\.1:${port} is unreachable`),
    );
    assert.doesNotMatch(stderr, /hunter2/, "the password is never printed");
  },
});

Deno.test({
  name: "cli --redis: ACL credentials from the URL or the environment; drops are reported",
  ignore: !redisAvailable,
  sanitizeResources: false,
  async fn() {
    const redis = await startRedis();
    try {
      assert.equal(
        await redisCommand(redis.port, "ACL SETUSER app on >s3cret ~* &* +@all"),
        "+OK",
      );
      assert.equal(await redisCommand(redis.port, "ACL SETUSER default off"), "+OK");
      const hostPort = `127.0.0.1:${redis.port}`;

      const wrong = await runCli([
        "--http",
        "--port",
        "0",
        "--redis",
        `redis://app:nope@${hostPort}`,
      ]);
      assert.equal(wrong.code, 1, wrong.stderr);
      assert.match(wrong.stderr, /unreachable/);
      assert.doesNotMatch(wrong.stderr, /nope/);

      const fromEnv = await startHttpServer(["--redis", `redis://${hostPort}`], {
        REDIS_USERNAME: "app",
        REDIS_PASSWORD: "s3cret",
      });
      assert.ok(await initialize(fromEnv.url.href));
      assert.equal((await fromEnv.stop()).code, 0);

      const fromUrl = await startHttpServer(["--redis", `redis://app:s3cret@${hostPort}`]);
      try {
        assert.ok(await initialize(fromUrl.url.href));
        const ready = async () => {
          const response = await fetch(new URL("/ready", fromUrl.url));
          await response.body?.cancel();
          return response.status;
        };
        const readiness = async (status: number) => {
          const until = Date.now() + 15_000;
          while ((await ready()) !== status) {
            assert.ok(Date.now() < until, `GET /ready never answered ${status}`);
            await new Promise((r) => setTimeout(r, 200));
          }
        };
        await readiness(200);
        // A GET stream open (its tail on Redis) while Redis goes away: the instance lives on.
        const session = await initialize(fromUrl.url.href);
        const stream = await fetch(fromUrl.url, {
          headers: {
            accept: "text/event-stream",
            "mcp-session-id": session,
            "mcp-protocol-version": "2025-11-25",
          },
        });
        assert.equal(stream.status, 200);
        const draining = stream.body!.pipeTo(new WritableStream()).catch(() => {});
        await redis.kill();
        await readiness(503); // a load balancer drains the instance while Redis is away
        await redis.restart();
        await redisCommand(redis.port, "ACL SETUSER app on >s3cret ~* &* +@all");
        await redisCommand(redis.port, "ACL SETUSER default off");
        const deadline = Date.now() + 15_000;
        while (Date.now() < deadline) {
          await new Promise((r) => setTimeout(r, 250));
          try {
            await initialize(fromUrl.url.href);
            break;
          } catch {
            // Redis coming back
          }
        }
        await readiness(200);
        await fetch(fromUrl.url, {
          method: "DELETE",
          headers: { "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" },
        }).then((r) => r.body?.cancel());
        await draining;
      } finally {
        const { code, stderr } = await fromUrl.stop();
        assert.equal(code, 0, stderr);
        assert.match(stderr, /Redis connection lost/);
        assert.match(stderr, /Redis connection back/);
        assert.doesNotMatch(stderr, /s3cret/);
      }
    } finally {
      await redis.stop();
    }
  },
});
