/**
 * Two `cli serve --http --redis URL` processes and nothing else: they share
 * the `requestState` key on Redis, a task made at one instance is polled,
 * read and cancelled at the other (2026-07-28), a legacy session made at one
 * is served by the other, and a Redis killed and
 * restarted mid-run (AOF on) loses no call that was answered: sessions made
 * before and during the run still work afterwards, and every answered
 * task's result is still readable (the figures are printed).
 */

import assert from "node:assert/strict";
import { type HttpServerProcess, startHttpServer } from "../helpers/everything_http_server.ts";
import { headers2026, initialize, post, request2026 } from "../helpers/http_helpers.ts";
import { redisAvailable, type RedisServer, startRedis } from "../helpers/redis_server.ts";

type Obj = Record<string, unknown>;

const LEGACY = "2025-11-25";
const TASKS = { extensions: { "io.modelcontextprotocol/tasks": {} } };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let nextId = 1;

/** Sends one inline command to Redis on `port`; the first reply line. */
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

/** A stateless (2026-07-28) request at `url`; its JSON-RPC response. */
async function stateless(url: string, method: string, params: Obj): Promise<Obj> {
  const response = await post(
    url,
    request2026(nextId++, method, params, {
      "io.modelcontextprotocol/clientCapabilities": TASKS,
    }),
    headers2026(method, (params.taskId ?? params.name) as string | undefined),
  );
  if (response.status !== 200) {
    await response.body?.cancel();
    throw new Error(`${method}: HTTP ${response.status}`);
  }
  return await response.json() as Obj;
}

/** A legacy `tools/call` of `greet` in `session` at `url`; the text it answered. */
async function legacyGreet(url: string, session: string, name: string): Promise<string> {
  const response = await post(
    url,
    {
      jsonrpc: "2.0",
      id: nextId++,
      method: "tools/call",
      params: { name: "greet", arguments: { name } },
    },
    { "mcp-session-id": session, "mcp-protocol-version": LEGACY },
  );
  if (response.status !== 200) {
    await response.body?.cancel();
    throw new Error(`tools/call: HTTP ${response.status}`);
  }
  const type = response.headers.get("content-type") ?? "";
  const text = await response.text();
  const json = type.includes("text/event-stream")
    ? JSON.parse(text.split("\n").filter((l) => l.startsWith("data:")).at(-1)!.slice(5))
    : JSON.parse(text);
  if (json.error) throw new Error(`tools/call: ${json.error.message}`);
  return json.result.content[0].text;
}

/** Polls `tasks/get` at `url` until the task reaches one of `statuses`. */
async function until(url: string, taskId: string, statuses: string[]): Promise<Obj> {
  for (let i = 0; i < 300; i++) {
    const task = (await stateless(url, "tasks/get", { taskId })).result as Obj | undefined;
    if (task && statuses.includes(task.status as string)) return task;
    await sleep(50);
  }
  throw new Error(`task ${taskId} never reached ${statuses}`);
}

async function withPair(
  options: { aof?: boolean },
  body: (redis: RedisServer, a: HttpServerProcess, b: HttpServerProcess) => Promise<void>,
): Promise<void> {
  const redis = await startRedis(options);
  const started: HttpServerProcess[] = [];
  try {
    started.push(await startHttpServer(["--redis", redis.url]));
    started.push(await startHttpServer(["--redis", redis.url]));
    await body(redis, started[0], started[1]);
  } finally {
    for (const instance of started) await instance.stop("SIGKILL");
    await redis.stop();
  }
}

Deno.test({
  name: "cli --redis alone: a task made at one instance is polled and cancelled at another",
  ignore: !redisAvailable,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await withPair({}, async (redis, a, b) => {
      const [atA, atB] = [a.url.href, b.url.href];
      // With no --request-state-secret, the instances share the requestState key on Redis.
      assert.equal(await redisCommand(redis.port, "EXISTS anubis:request-state:keys"), ":1");
      // Stateless calls at either instance.
      for (const url of [atA, atB]) {
        const greet = await stateless(url, "tools/call", {
          name: "greet",
          arguments: { name: "x" },
        });
        assert.deepEqual((greet.result as Obj).content, [{ type: "text", text: "Hello, x!" }]);
      }
      // A short task made at A completes, and its result is read at B.
      const short = (await stateless(atA, "tools/call", {
        name: "slow_compute",
        arguments: { seconds: 0.2, label: "short" },
      })).result as Obj;
      assert.equal(short.resultType, "task", JSON.stringify(short));
      const done = await until(atB, short.taskId as string, ["completed", "failed"]);
      assert.equal(done.status, "completed", JSON.stringify(done));
      assert.match(JSON.stringify(done.result), /Computed short after 0.2s/);

      // A long task made at A is polled at B and cancelled there; A reads it cancelled.
      const long = (await stateless(atA, "tools/call", {
        name: "slow_compute",
        arguments: { seconds: 60 },
      })).result as Obj;
      assert.equal((await until(atB, long.taskId as string, ["working"])).status, "working");
      const cancel = await stateless(atB, "tasks/cancel", { taskId: long.taskId });
      assert.equal(cancel.error, undefined, JSON.stringify(cancel));
      assert.equal((await until(atA, long.taskId as string, ["cancelled"])).status, "cancelled");

      // A legacy session made at A is served at B (the session store is on Redis).
      const session = await initialize(atA, LEGACY);
      assert.equal(await legacyGreet(atB, session, "moved"), "Hello, moved!");
    });
  },
});

Deno.test({
  name: "cli --redis alone: Redis restarted mid-run (AOF on) loses no answered call",
  ignore: !redisAvailable,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await withPair({ aof: true }, async (redis, a, b) => {
      const urls = [a.url.href, b.url.href];
      const before = await initialize(urls[0], LEGACY);
      assert.equal(await legacyGreet(urls[1], before, "before"), "Hello, before!");

      const tally = { answered: 0, failed: 0, sessions: [before], tasks: [] as string[] };
      const RUN_MS = 14_000;
      const start = Date.now();
      const outage = (async () => {
        await sleep(3_000);
        await redis.kill();
        await sleep(7_000); // longer than a command's timeout (5 s): calls meanwhile fail
        await redis.restart();
      })();
      for (let i = 0; Date.now() - start < RUN_MS; i++) {
        const url = urls[i % 2];
        try {
          switch (i % 4) {
            case 0: { // a new legacy session, used at the other instance
              const session = await initialize(url, LEGACY);
              tally.sessions.push(session);
              break;
            }
            case 1: // a session made earlier, at this instance
              await legacyGreet(url, tally.sessions[i % tally.sessions.length], `c${i}`);
              break;
            case 2: { // a task (2026-07-28)
              const made = (await stateless(url, "tools/call", {
                name: "slow_compute",
                arguments: { seconds: 0, label: `t${i}` },
              })).result as Obj | undefined;
              if (made?.resultType !== "task") throw new Error("no task");
              tally.tasks.push(made.taskId as string);
              break;
            }
            default: { // a stateless call
              const greet = await stateless(url, "tools/call", {
                name: "greet",
                arguments: { name: `s${i}` },
              });
              if (!greet.result) throw new Error("no result");
            }
          }
          tally.answered++;
          await sleep(10);
        } catch {
          tally.failed++;
          await sleep(100);
        }
      }
      await outage;

      // Afterwards: every session that was answered works at both instances, and every
      // answered task's result is readable at both.
      const lost: string[] = [];
      const readable = async (what: string, check: () => Promise<unknown>) => {
        let last: unknown;
        for (let attempt = 0; attempt < 25; attempt++) {
          try {
            return await check();
          } catch (error) {
            last = error;
            await sleep(200); // instances reconnecting after the restart
          }
        }
        lost.push(`${what}: ${(last as Error)?.message}`);
      };
      for (const session of tally.sessions) {
        for (const url of urls) {
          await readable(
            `session ${session} at ${url}`,
            async () => assert.equal(await legacyGreet(url, session, "after"), "Hello, after!"),
          );
        }
      }
      for (const taskId of tally.tasks) {
        for (const url of urls) {
          await readable(`task ${taskId} at ${url}`, async () => {
            const task = (await stateless(url, "tasks/get", { taskId })).result as Obj;
            assert.equal(task.status, "completed", JSON.stringify(task));
            assert.match(JSON.stringify(task.result), /Computed t\d+ after 0s/);
          });
        }
      }
      console.log(
        "redis restart figures:",
        JSON.stringify({
          answered: tally.answered,
          failedDuringOutage: tally.failed,
          sessionsChecked: tally.sessions.length,
          tasksChecked: tally.tasks.length,
          lostAfter: lost.length,
        }),
      );
      assert.deepEqual(lost, []);
      assert.ok(tally.failed > 0, "some calls met the outage");
    });
  },
});
