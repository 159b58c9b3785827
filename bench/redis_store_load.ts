/**
 * Redis store throughput, run in its own process (`deno run -A --unstable-kv
 * bench/redis_store_load.ts SECONDS`), on a redis-server it starts on a free
 * loopback port (AOF off, as a cache-style deployment): per second, a session
 * save then load, a task round trip (create, finish, read back), and a
 * rate-limit take, through the `@anubis/redis` stores, beside the raw Redis
 * commands that do the same work at least (SET PX + GET; SET NX PX, GET,
 * SET XX, GET; one INCR), and beside the Deno KV stores on a local sqlite
 * file, all in one run. Rows are taken in turn for a few rounds, each
 * keeping its best. Prints one `BENCH {...}` JSON line per measurement.
 *
 * @module
 */

import type { Measurement } from "./measurement.ts";
import { better, emit, timed } from "./store_load.ts";
import { redisAvailable, startRedis } from "../tests/helpers/redis_server.ts";
import { openRedis, RedisRateLimitStore, RedisSessionStore, RedisTaskStore } from "@anubis/redis";
import { clientOf } from "../redis/_client.ts";
import { KvRateLimitStore, KvSessionStore, KvTaskStore } from "@anubis/session-kv";
import type { SessionRecord, TaskRecord } from "@anubis/core";

const ROUNDS = 4;

const SESSION: SessionRecord = {
  v: 1,
  id: "bench",
  protocolVersion: "2025-11-25",
  clientInfo: { name: "bench-client", version: "1.0.0" },
  clientCapabilities: { elicitation: {}, sampling: {} },
  initialized: true,
  subscriptions: [],
  assigns: { userId: 7, tenant: "acme", scopes: ["read", "write"] },
  updatedAt: 0,
};

function newTask(): TaskRecord {
  const now = Date.now();
  return {
    v: 1,
    id: crypto.randomUUID(),
    owner: "session:bench",
    method: "tools/call",
    status: "working",
    createdAt: now,
    updatedAt: now,
    ttlMs: 600_000,
    expiresAt: now + 600_000,
    pollIntervalMs: 1_000,
    lease: { holder: "bench-instance", expiresAt: now + 15_000 },
  };
}

const OUTCOME = {
  status: "completed" as const,
  result: { content: [{ type: "text", text: "Computed result after 0s" }] },
};

interface Tasks {
  create(record: TaskRecord): Promise<void>;
  finish(id: string, outcome: typeof OUTCOME): Promise<unknown>;
  get(id: string): Promise<{ status: string } | undefined>;
}

async function roundTrip(store: Tasks): Promise<void> {
  const task = newTask();
  await store.create(task);
  await store.finish(task.id, OUTCOME);
  const read = await store.get(task.id);
  if (read?.status !== "completed") throw new Error(`task ${task.id} read as ${read?.status}`);
}

const LIMIT = { perSecond: 1e9, burst: 1e9 }; // never refuses: the take's cost alone

if (import.meta.main) {
  if (!redisAvailable) {
    console.error("redis-server is not on PATH: nothing to measure");
    Deno.exit(0);
  }
  const seconds = Number(Deno.args[0] ?? 1);
  const server = await startRedis();
  const redis = await openRedis(server.url);
  const raw = clientOf(redis);
  const dir = await Deno.makeTempDir({ prefix: "anubis-bench-redis-" });
  const kv = await Deno.openKv(`${dir}/stores.sqlite`);
  try {
    const sessions = new RedisSessionStore(redis, { maxSessions: 1_000_000 });
    const kvSessions = new KvSessionStore(kv);
    const bound = { maxTasks: 10_000_000, maxTasksPerCaller: 10_000_000 };
    const tasks = new RedisTaskStore(redis, bound);
    const kvTasks = new KvTaskStore(kv, bound);
    const rates = new RedisRateLimitStore(redis);
    const kvRates = new KvRateLimitStore(kv);
    let n = 0;
    const json = JSON.stringify(SESSION);
    const rawTasks: Tasks = {
      async create(record) {
        const made = await raw.set(`raw:task:${record.id}`, JSON.stringify(record), {
          condition: "NX",
          expiration: { type: "PX", value: 600_000 },
        });
        if (made !== "OK") throw new Error("task exists");
      },
      async finish(id, outcome) {
        const record = JSON.parse((await raw.get(`raw:task:${id}`))!);
        const next = { ...record, ...outcome, updatedAt: Date.now() };
        await raw.set(`raw:task:${id}`, JSON.stringify(next), { condition: "XX", KEEPTTL: true });
        return next;
      },
      async get(id) {
        const text = await raw.get(`raw:task:${id}`);
        return text ? JSON.parse(text) : undefined;
      },
    };
    const rows: [string, () => Promise<unknown>][] = [
      ["session save+load: Redis store", async () => {
        const id = `s${n++ % 64}`;
        await sessions.save({ ...SESSION, id }, 60_000);
        if (!(await sessions.load(id))) throw new Error("lost");
      }],
      ["session save+load: raw Redis SET PX + GET", async () => {
        const id = `raw:s:${n++ % 64}`;
        await raw.set(id, json, { expiration: { type: "PX", value: 60_000 } });
        if (!(await raw.get(id))) throw new Error("lost");
      }],
      ["session save+load: KV store", async () => {
        const id = `s${n++ % 64}`;
        await kvSessions.save({ ...SESSION, id }, 60_000);
        if (!(await kvSessions.load(id))) throw new Error("lost");
      }],
      ["task round trip: Redis store", () => roundTrip(tasks)],
      ["task round trip: raw Redis SET NX, GET, SET XX, GET", () => roundTrip(rawTasks)],
      ["task round trip: KV store", () => roundTrip(kvTasks as unknown as Tasks)],
      ["rate-limit take: Redis store", () => rates.take(`c${n++ % 64}`, LIMIT)],
      ["rate-limit take: raw Redis INCR", () => raw.incr(`raw:rate:${n++ % 64}`)],
      ["rate-limit take: KV store", () => kvRates.take(`c${n++ % 64}`, LIMIT)],
    ];
    const best = new Map<string, Measurement>();
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, op] of rows) better(best, name, await timed(seconds / ROUNDS, op));
    }
    for (const [name, measurement] of best) emit(name, measurement);
  } finally {
    kv.close();
    redis.close();
    await server.stop();
    await Deno.remove(dir, { recursive: true });
  }
}
