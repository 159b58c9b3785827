/**
 * Chaos on Redis: three `cli serve --http --redis URL` processes on one
 * redis-server, one SIGKILLed and restarted every 3 s for a bounded time
 * (`CHAOS_MS`, default 15 s), while watchers' GET streams are resumed with
 * `Last-Event-ID` at a random live instance each time and triggers raise
 * tool-list changes at random instances. Every change whose raising call was
 * answered reaches every watcher exactly once, in order: 0 lost, 0
 * duplicated (the figures are printed).
 *
 * Each instance is given `--redis URL` and nothing else: sessions, streams,
 * changes and session links all go through Redis.
 *
 * Meanwhile a stateless (2026-07-28) client makes tasks at random instances
 * and reads each back at another: every task whose creation was answered is
 * found afterwards (the figures are printed).
 *
 * Also: a request running on an instance that is killed does not leave a
 * client that resumes its stream at another instance waiting for ever.
 */

import assert from "node:assert/strict";
import { type HttpServerProcess, startHttpServer } from "../helpers/everything_http_server.ts";
import { headers2026, initialize, post, request2026, SseReader } from "../helpers/http_helpers.ts";
import { redisAvailable, type RedisServer, startRedis } from "../helpers/redis_server.ts";
import { callStreaming, nextMessage, readToEnd, resume } from "../helpers/stream_end.ts";

const VERSION = "2025-11-25";
const INSTANCES = 3;
const LOAD_MS = Number(Deno.env.get("CHAOS_MS") ?? 15_000);
const KILL_EVERY_MS = 3_000;
const WATCHERS = 3;
const TRIGGER_WORKERS = 2;
const ATTEMPTS = 60;
const LEASE_MS = 10_000;

const headersOf = (sessionId: string) => ({
  "mcp-session-id": sessionId,
  "mcp-protocol-version": VERSION,
});

/** Three instances on one Redis (and nothing else), replaced on demand. */
class Fleet {
  readonly live: (HttpServerProcess | undefined)[] = [];
  readonly #all: HttpServerProcess[] = [];
  constructor(readonly redis: RedisServer) {}

  async start(slot: number): Promise<void> {
    const instance = await startHttpServer(["--redis", this.redis.url]);
    this.#all.push(instance);
    this.live[slot] = instance;
  }

  /** A random live instance's URL. */
  pick(): string {
    const up = this.live.filter((i): i is HttpServerProcess => i !== undefined);
    return up[Math.floor(Math.random() * up.length)].url.href;
  }

  async kill(slot: number): Promise<void> {
    const victim = this.live[slot]!;
    this.live[slot] = undefined;
    await victim.stop("SIGKILL");
  }

  async stopAll(): Promise<void> {
    for (const instance of this.#all) await instance.stop("SIGKILL");
  }
}

async function withFleet(body: (fleet: Fleet) => Promise<void>): Promise<void> {
  const redis = await startRedis();
  const fleet = new Fleet(redis);
  try {
    await body(fleet);
  } finally {
    await fleet.stopAll();
    await redis.stop();
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let statelessId = 0;

/** A stateless (2026-07-28) request with the tasks extension; its JSON-RPC response. */
async function stateless(url: string, method: string, params: Record<string, unknown>) {
  const response = await post(
    url,
    request2026(++statelessId, method, params, {
      "io.modelcontextprotocol/clientCapabilities": {
        extensions: { "io.modelcontextprotocol/tasks": {} },
      },
    }),
    headers2026(method, (params.taskId ?? params.name) as string | undefined),
  );
  if (response.status !== 200) {
    await response.body?.cancel();
    throw new Error(`${method}: HTTP ${response.status}`);
  }
  return await response.json() as { result?: Record<string, unknown>; error?: unknown };
}

async function retry<T>(what: string, fn: () => Promise<T>): Promise<T> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    try {
      return await fn();
    } catch (error) {
      if (error instanceof assert.AssertionError) throw error;
      await sleep(20 + attempt * 10);
    }
  }
  throw new Error(`${what} kept failing`);
}

Deno.test({
  name: "redis chaos: 3 instances, SIGKILL + restart every 3 s, GET streams resumed anywhere",
  ignore: !redisAvailable,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await withFleet(async (fleet) => {
      for (let slot = 0; slot < INSTANCES; slot++) await fleet.start(slot);
      const tally = { kills: 0, resumes: 0, streamsCut: 0, lostSessions: 0, attempts: 0 };
      const stopWatching = new AbortController();
      const stopLoad = new AbortController();

      const seen: number[][] = [];
      const watch = async (sessionId: string, ids: number[]) => {
        let last: string | undefined;
        while (!stopWatching.signal.aborted) {
          const headers: Record<string, string> = {
            accept: "text/event-stream",
            ...headersOf(sessionId),
          };
          if (last !== undefined) headers["last-event-id"] = last;
          // Each stream is dropped after 0.5-2 s (or cut by a kill) and resumed at a random instance.
          const move = new AbortController();
          const timer = setTimeout(() => move.abort(), 500 + Math.random() * 1_500);
          const signal = AbortSignal.any([stopWatching.signal, move.signal]);
          try {
            const response = await fetch(fleet.pick(), { headers, signal });
            if (response.status === 404) tally.lostSessions++;
            if (response.status !== 200) {
              await response.body?.cancel();
              await sleep(50);
              continue;
            }
            if (last !== undefined) tally.resumes++;
            const reader = new SseReader(response);
            for (let event = await reader.next(); event; event = await reader.next()) {
              if (event.id !== undefined) last = event.id;
              if (!event.data) continue;
              assert.equal(JSON.parse(event.data).method, "notifications/tools/list_changed");
              ids.push(Number(event.id));
            }
          } catch (error) {
            if (error instanceof assert.AssertionError) throw error;
            if (!stopWatching.signal.aborted && !move.signal.aborted) tally.streamsCut++;
          } finally {
            clearTimeout(timer);
          }
          await sleep(20);
        }
      };
      const watching: Promise<void>[] = [];
      for (let w = 0; w < WATCHERS; w++) {
        const sessionId = await retry("initialize", () => initialize(fleet.pick(), VERSION));
        seen.push([]);
        watching.push(watch(sessionId, seen[w]));
      }
      await sleep(500); // every watcher's first stream is open before changes are raised

      let answered = 0;
      const trigger = async () => {
        let id = 0;
        while (!stopLoad.signal.aborted) {
          const sessionId = await retry("initialize", () => initialize(fleet.pick(), VERSION));
          for (let i = 0; i < 5 && !stopLoad.signal.aborted; i++) {
            await retry("tools/call", async () => {
              tally.attempts++;
              const response = await post(fleet.pick(), {
                jsonrpc: "2.0",
                id: ++id,
                method: "tools/call",
                params: { name: "test_trigger_tool_change", arguments: {} },
              }, headersOf(sessionId));
              if (response.status === 404) tally.lostSessions++;
              const text = await response.text();
              assert.ok(response.status !== 404, "session lost");
              if (response.status !== 200) throw new Error(`status ${response.status}`);
              const data = text.split("\n").find((l) => l.startsWith("data: {"));
              const message = JSON.parse(data ? data.slice(6) : text);
              if (!message.result) throw new Error(JSON.stringify(message));
            });
            answered++;
            await sleep(30);
          }
        }
      };
      // The stateless era: tasks made at one random instance, read back at another.
      const tasks: string[] = [];
      const statelessLoad = async () => {
        while (!stopLoad.signal.aborted) {
          const made = await retry("stateless tools/call", async () => {
            const { result } = await stateless(fleet.pick(), "tools/call", {
              name: "slow_compute",
              arguments: { seconds: 0 },
            });
            if (result?.resultType !== "task") throw new Error(JSON.stringify(result));
            return result.taskId as string;
          });
          tasks.push(made);
          await retry("tasks/get", async () => {
            const { result } = await stateless(fleet.pick(), "tasks/get", { taskId: made });
            if (!result) throw new Error("not found");
          });
          await sleep(30);
        }
      };
      const load = [...Array.from({ length: TRIGGER_WORKERS }, trigger), statelessLoad()];
      const chaos = (async () => {
        // One kill per tick (a restart that takes longer delays the next), a bounded count.
        const began = Date.now();
        const order: number[] = [];
        for (let k = 1; k * KILL_EVERY_MS < LOAD_MS; k++) {
          await sleep(Math.max(0, began + k * KILL_EVERY_MS - Date.now()));
          if (order.length === 0) order.push(...[0, 1, 2].sort(() => Math.random() - 0.5));
          const slot = order.shift()!;
          await fleet.kill(slot);
          tally.kills++;
          await fleet.start(slot);
        }
      })();
      await chaos;
      stopLoad.abort();
      await Promise.all(load);

      const deadline = Date.now() + 20_000;
      while (Date.now() < deadline && seen.some((ids) => new Set(ids).size < answered)) {
        await sleep(100);
      }
      await sleep(1_000); // a late duplicate would show now
      stopWatching.abort();
      await Promise.all(watching);

      const taskStatuses: Record<string, number> = {};
      for (const taskId of tasks) {
        const status = await retry("tasks/get after", async () => {
          const { result } = await stateless(fleet.pick(), "tasks/get", { taskId });
          return (result?.status as string | undefined) ?? "lost";
        });
        taskStatuses[status] = (taskStatuses[status] ?? 0) + 1;
      }

      const figures = seen.map((ids) => {
        const unique = new Set(ids).size;
        return {
          received: ids.length,
          duplicated: ids.length - unique,
          lost: Math.max(0, answered - unique),
        };
      });
      console.error(
        `redis chaos figures: ${
          JSON.stringify({
            ...tally,
            changesAnswered: answered,
            perWatcher: figures,
            statelessTasksAnswered: tasks.length,
            taskStatuses,
          })
        }`,
      );
      assert.ok(tally.kills >= 3, "the chaos ran");
      assert.ok(tally.resumes >= 5 * WATCHERS, "streams were resumed elsewhere");
      assert.ok(tally.streamsCut >= 1, "a kill cut a stream");
      assert.equal(tally.lostSessions, 0);
      assert.ok(answered > 10, `changes raised: ${answered}`);
      assert.ok(tasks.length > 10, `stateless tasks made: ${tasks.length}`);
      assert.equal(taskStatuses.lost, undefined, "every answered stateless task is found");
      for (const [w, ids] of seen.entries()) {
        assert.ok(ids.every((id, i) => i === 0 || id > ids[i - 1]), `watcher ${w} order: ${ids}`);
        assert.equal(figures[w].duplicated, 0, `watcher ${w} duplicates`);
        assert.equal(figures[w].lost, 0, `watcher ${w} lost events`);
        assert.ok(ids.length <= tally.attempts, `watcher ${w}: more than raised`);
      }
    });
  },
});

Deno.test({
  name: "redis: a resumed stream whose request's instance was killed ends with an error",
  ignore: !redisAvailable,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await withFleet(async (fleet) => {
      await fleet.start(0);
      await fleet.start(1);
      const a = fleet.live[0]!.url.href;
      const b = fleet.live[1]!.url.href;
      const session = await initialize(a, VERSION);
      const { reader } = await callStreaming(a, session, 7, "test_slow_operation", {
        seconds: 600,
      });
      const first = await nextMessage(reader);
      await reader.cancel();
      await fleet.kill(0);
      const resumed = await resume(b, session, first.id!);
      assert.equal(resumed.status, 200);
      const rest = await readToEnd(new SseReader(resumed), 4 * LEASE_MS);
      assert.equal(rest.ended, true, "the resumed stream ended within the bound");
      const last = rest.messages.at(-1)?.message as { id?: unknown; error?: { code?: number } };
      assert.equal(last?.id, 7);
      assert.equal(last.error?.code, -32603);
    });
  },
});
