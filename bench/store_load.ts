/**
 * Event store throughput, run in its own process (`deno run -A
 * bench/store_load.ts SECONDS`): append and replay rates of the memory and KV
 * stores against a raw Deno KV loop that does what a KV append must do at
 * least (read the counter, then commit counter and event atomically). Prints
 * one `BENCH {...}` JSON line per measurement.
 *
 * @module
 */

import { type Measurement, percentileOf } from "./measurement.ts";

/** The part of the `EventStore` contract measured here. */
interface Store {
  append(sessionId: string, data: string): Promise<number>;
  replay(sessionId: string, afterId: number): Promise<unknown[]>;
}

/** A typical event: one progress notification as JSON text. */
const EVENT = JSON.stringify({
  jsonrpc: "2.0",
  method: "notifications/progress",
  params: { progressToken: "bench-1", progress: 1, total: 10, message: "working on it" },
});
/** How many events a replay returns. */
const REPLAY_EVENTS = 500;

/** Runs `op` one at a time for `seconds`: its rate and latency percentiles. */
export async function timed(seconds: number, op: () => Promise<unknown>): Promise<Measurement> {
  const latencies: number[] = [];
  const start = performance.now();
  const end = start + seconds * 1000;
  let now = start;
  while (now < end && latencies.length < 1_000_000) {
    await op();
    const after = performance.now();
    latencies.push(after - now);
    now = after;
  }
  latencies.sort((a, b) => a - b);
  return {
    rps: latencies.length / ((now - start) / 1000),
    p50Ms: percentileOf(latencies, 50),
    p99Ms: percentileOf(latencies, 99),
    requests: latencies.length,
    errors: 0,
  };
}

/** How many rounds take the stores in turn; each store keeps its best round. */
export const ROUNDS = 3;

/** Keeps `measurement` as `name`'s when it is the fastest so far. */
export function better(
  best: Map<string, Measurement>,
  name: string,
  measurement: Measurement,
): void {
  const seen = best.get(name);
  if (!seen || measurement.rps > seen.rps) best.set(name, measurement);
}

/**
 * Measures every store in rounds, taking the stores in turn, so that a burst
 * of load from elsewhere on the machine costs one round, not one store.
 */
async function measureStores(stores: [string, Store][], seconds: number): Promise<void> {
  const best = new Map<string, Measurement>();
  for (const [, store] of stores) {
    for (let i = 0; i < REPLAY_EVENTS; i++) await store.append("replay", EVENT);
  }
  const slice = seconds / ROUNDS;
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, store] of stores) {
      let n = 0;
      better(best, `${name} append`, await timed(slice, () => store.append(`a${n++ % 8}`, EVENT)));
      const replay = await timed(slice, () => store.replay("replay", 0));
      better(best, `${name} replay`, { ...replay, rps: replay.rps * REPLAY_EVENTS });
    }
  }
  for (const [name, measurement] of best) emit(name, measurement);
}

/** Read-then-commit: what an append with a KV counter costs at least. */
function rawKv(kv: Deno.Kv): Store {
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  return {
    async append(sessionId, data) {
      const counterKey = ["raw", "ctr", sessionId];
      for (;;) {
        const counter = await kv.get<Deno.KvU64>(counterKey);
        const id = (counter.value?.value ?? 0n) + 1n;
        const { ok } = await kv.atomic().check(counter).set(counterKey, new Deno.KvU64(id))
          .set(["raw", "ev", sessionId, id], encoder.encode(data)).commit();
        if (ok) return Number(id);
      }
    },
    async replay(sessionId, afterId) {
      const events = [];
      const list = kv.list<Uint8Array>({
        start: ["raw", "ev", sessionId, BigInt(afterId + 1)],
        end: ["raw", "ev", sessionId, BigInt(Number.MAX_SAFE_INTEGER)],
      });
      for await (const entry of list) events.push(decoder.decode(entry.value));
      return events;
    },
  };
}

/** Prints one `BENCH {...}` line for the orchestrator. */
export function emit(name: string, measurement: Measurement): void {
  console.log(`BENCH ${JSON.stringify({ name, ...measurement })}`);
}

/** The first of `specifiers` that imports (a package not in the workspace yet falls through). */
export async function importFirst(
  specifiers: string[],
): Promise<Record<string, unknown> | undefined> {
  for (const specifier of specifiers) {
    try {
      return await import(specifier);
    } catch {
      // Not landed yet, or not in the workspace yet: try the next.
    }
  }
  return undefined;
}

if (import.meta.main) {
  const seconds = Number(Deno.args[0] ?? 1);
  const dir = await Deno.makeTempDir({ prefix: "anubis-bench-kv-" });
  const open: Deno.Kv[] = [];
  try {
    const stores: [string, Store][] = [];
    const memory = await importFirst([
      "@anubis/event-store-memory",
      new URL("../event-store-memory/mod.ts", import.meta.url).href,
    ]);
    if (memory?.MemoryEventStore) {
      stores.push(["memory store", new (memory.MemoryEventStore as new () => Store)()]);
    }
    const rawDb = await Deno.openKv(`${dir}/raw.sqlite`);
    open.push(rawDb);
    stores.push(["raw KV read-then-commit", rawKv(rawDb)]);
    const kvModule = await importFirst([
      "@anubis/event-store-kv",
      new URL("../event-store-kv/mod.ts", import.meta.url).href,
    ]);
    if (kvModule?.KvEventStore) {
      const db = await Deno.openKv(`${dir}/store.sqlite`);
      open.push(db);
      const Kv = kvModule.KvEventStore as new (kv: Deno.Kv) => Store;
      stores.push(["KV store", new Kv(db)]);
    }
    await measureStores(stores, seconds);
  } finally {
    for (const db of open) db.close();
    await Deno.remove(dir, { recursive: true });
  }
}
