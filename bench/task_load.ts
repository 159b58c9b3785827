/**
 * Task store throughput, run in its own process (`deno run -A
 * bench/task_load.ts SECONDS`): task round trips per second, each what a
 * task-augmented `tools/call` of a tool that answers at once costs the store
 * (create the task before answering, store its outcome, read it back as
 * `tasks/get` does), with the memory and the KV store, beside two raw Deno KV
 * loops measured in the same run: one commit of a new task-sized value per
 * operation (the raw commit rate), and the fewest KV operations a durable
 * round trip needs (a checked create, a read then checked write of the
 * outcome, a read). Prints one `BENCH {...}` JSON line per measurement.
 *
 * @module
 */

import type { Measurement } from "./measurement.ts";
import { better, emit, importFirst, timed } from "./store_load.ts";

/**
 * Rounds taking the rows in turn, each row keeping its best: more and shorter
 * than the event stores', as KV commits on a shared machine stall in bursts.
 */
const ROUNDS = 6;

type Obj = Record<string, unknown>;

/** The part of the `TaskStore` contract a round trip uses. */
interface Store {
  create(record: Obj): Promise<void>;
  finish(id: string, outcome: Obj): Promise<Obj | undefined>;
  get(id: string): Promise<Obj | undefined>;
}

/** A task as the runtime creates it for a `tools/call` (a lease, a 10-minute TTL). */
function newTask(): Obj {
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
  status: "completed",
  result: { content: [{ type: "text", text: "Computed result after 0s" }] },
};

/** create -> finish -> get, checking that the read sees the outcome. */
async function roundTrip(store: Store): Promise<void> {
  const task = newTask();
  await store.create(task);
  await store.finish(task.id as string, OUTCOME);
  const read = await store.get(task.id as string);
  if (read?.status !== "completed") throw new Error(`task ${task.id} read as ${read?.status}`);
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const EXPIRE_IN = 600_000;

/** One commit of a new task-sized JSON value per operation: the raw commit rate. */
function rawCommit(kv: Deno.Kv): () => Promise<void> {
  return async () => {
    const task = newTask();
    const bytes = encoder.encode(JSON.stringify(task));
    const { ok } = await kv.atomic()
      .set(["raw", "commit", task.id as string], bytes, { expireIn: EXPIRE_IN }).commit();
    if (!ok) throw new Error("commit refused");
  };
}

/** The fewest KV operations of a durable round trip: 2 checked commits, 2 reads. */
function rawRoundTrip(kv: Deno.Kv): Store {
  const key = (id: string) => ["raw", "task", id];
  return {
    async create(record) {
      const { ok } = await kv.atomic().check({ key: key(record.id as string), versionstamp: null })
        .set(key(record.id as string), encoder.encode(JSON.stringify(record)), {
          expireIn: EXPIRE_IN,
        })
        .set(
          ["raw", "owner", record.owner as string, record.createdAt as number, record.id as string],
          1,
          {
            expireIn: EXPIRE_IN,
          },
        )
        .commit();
      if (!ok) throw new Error("task exists");
    },
    async finish(id, outcome) {
      const entry = await kv.get<Uint8Array>(key(id));
      const { lease: _lease, ...record } = JSON.parse(decoder.decode(entry.value!)) as Obj;
      const next = { ...record, ...outcome, updatedAt: Date.now() };
      const { ok } = await kv.atomic().check(entry)
        .set(key(id), encoder.encode(JSON.stringify(next)), { expireIn: EXPIRE_IN }).commit();
      if (!ok) throw new Error("lost a race");
      return next;
    },
    async get(id) {
      const entry = await kv.get<Uint8Array>(key(id));
      return entry.value ? JSON.parse(decoder.decode(entry.value)) : undefined;
    },
  };
}

/** Every row in rounds, taken in turn, each keeping its best round. */
async function measure(rows: [string, () => Promise<unknown>][], seconds: number): Promise<void> {
  const best = new Map<string, Measurement>();
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, op] of rows) better(best, name, await timed(seconds / ROUNDS, op));
  }
  for (const [name, measurement] of best) emit(name, measurement);
}

if (import.meta.main) {
  const seconds = Number(Deno.args[0] ?? 1);
  const dir = await Deno.makeTempDir({ prefix: "anubis-bench-tasks-" });
  const open: Deno.Kv[] = [];
  const db = async (name: string) => {
    const kv = await Deno.openKv(`${dir}/${name}.sqlite`);
    open.push(kv);
    return kv;
  };
  try {
    const rows: [string, () => Promise<unknown>][] = [];
    const core = await importFirst([
      "@anubis/core",
      new URL("../core/mod.ts", import.meta.url).href,
    ]);
    if (core?.MemoryTaskStore) {
      // The benchmark measures round trips, not the bounds: every task has one owner, so the
      // per-caller share is lifted (the total still evicts the oldest ended tasks, as before).
      const memory = new (core.MemoryTaskStore as new (options: Obj) => Store)({
        maxTasksPerCaller: Number.MAX_SAFE_INTEGER,
      });
      rows.push(["memory store", () => roundTrip(memory)]);
    }
    rows.push(["raw KV commit", rawCommit(await db("commit"))]);
    const raw = rawRoundTrip(await db("raw"));
    rows.push(["raw KV round trip", () => roundTrip(raw)]);
    const kvModule = await importFirst([
      "@anubis/session-kv",
      new URL("../session-kv/mod.ts", import.meta.url).href,
    ]);
    if (kvModule?.KvTaskStore) {
      const Kv = kvModule.KvTaskStore as new (kv: Deno.Kv, options: Obj) => Store;
      // KV cannot evict: both bounds lifted, as the store had none before they came.
      const store = new Kv(await db("store"), {
        maxTasks: Number.MAX_SAFE_INTEGER,
        maxTasksPerCaller: Number.MAX_SAFE_INTEGER,
      });
      rows.push(["KV store", () => roundTrip(store)]);
    }
    await measure(rows, seconds);
  } finally {
    for (const kv of open) kv.close();
    await Deno.remove(dir, { recursive: true });
  }
}
