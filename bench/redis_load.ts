/**
 * Event appends on Redis, run in its own process (`deno run -A
 * bench/redis_load.ts SECONDS`): `RedisEventStore.append` (one Lua script:
 * INCR, XADD, bounds, PEXPIRE, PUBLISH) against the raw Redis commands an
 * append needs at least (INCR and XADD pipelined: one round trip), and
 * against the KV event store on a local file, in the same run, one at a time
 * and 16 in flight. A redis-server of its own on a free loopback port.
 * Prints one `BENCH {...}` JSON line per measurement.
 *
 * @module
 */

import { openRedis, RedisEventStore } from "../redis/mod.ts";
import { clientOf } from "../redis/_client.ts";
import { KvEventStore } from "../event-store-kv/mod.ts";
import { startRedis } from "../tests/helpers/redis_server.ts";
import { better, emit, ROUNDS } from "./store_load.ts";
import { type Measurement, percentileOf } from "./measurement.ts";

/** A typical event: one progress notification as JSON text. */
const EVENT = JSON.stringify({
  jsonrpc: "2.0",
  method: "notifications/progress",
  params: { progressToken: "bench-1", progress: 1, total: 10, message: "working on it" },
});
/** Appends in flight in the concurrent rows. */
const IN_FLIGHT = 16;

/** Runs `op` from `lanes` loops at once for `seconds`: appends per second and latencies. */
async function timed(
  seconds: number,
  lanes: number,
  op: (lane: number) => Promise<unknown>,
): Promise<Measurement> {
  const latencies: number[] = [];
  const start = performance.now();
  const end = start + seconds * 1000;
  await Promise.all(Array.from({ length: lanes }, async (_, lane) => {
    while (performance.now() < end && latencies.length < 2_000_000) {
      const before = performance.now();
      await op(lane);
      latencies.push(performance.now() - before);
    }
  }));
  const elapsed = (performance.now() - start) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    rps: latencies.length / elapsed,
    p50Ms: percentileOf(latencies, 50),
    p99Ms: percentileOf(latencies, 99),
    requests: latencies.length,
    errors: 0,
  };
}

if (import.meta.main) {
  const seconds = Number(Deno.args[0] ?? 1);
  const server = await startRedis();
  const dir = await Deno.makeTempDir({ prefix: "anubis-bench-redis-" });
  const redis = await openRedis(server.url);
  const raw = await openRedis(server.url);
  const kv = await Deno.openKv(`${dir}/events.kv`);
  try {
    const store = new RedisEventStore(redis);
    const kvStore = new KvEventStore(kv);
    const client = clientOf(raw);
    const rawAppend = async (session: string) => {
      const [id] = await Promise.all([
        client.sendCommand<number>(["INCR", `raw:${session}:n`]),
        client.sendCommand(["XADD", `raw:${session}:x`, "*", "d", EVENT]),
      ]);
      return id;
    };
    const rows: [string, number, (lane: number, n: number) => Promise<unknown>][] = [];
    for (const lanes of [1, IN_FLIGHT]) {
      const suffix = lanes === 1 ? "" : ` (${lanes} in flight)`;
      rows.push([
        `RedisEventStore${suffix}`,
        lanes,
        (l, n) => store.append(`s${l}-${n % 8}`, EVENT),
      ]);
      rows.push([`raw Redis INCR+XADD${suffix}`, lanes, (l, n) => rawAppend(`s${l}-${n % 8}`)]);
      rows.push([
        `KvEventStore${suffix}`,
        lanes,
        (l, n) => kvStore.append(`s${l}-${n % 8}`, EVENT),
      ]);
    }
    const best = new Map<string, Measurement>();
    for (let round = 0; round < 2 * ROUNDS; round++) {
      for (const [name, lanes, op] of rows) {
        const counters = new Array(lanes).fill(0);
        better(best, name, await timed(seconds / (2 * ROUNDS), lanes, (l) => op(l, counters[l]++)));
      }
    }
    for (const [name, measurement] of best) emit(`${name} append`, measurement);
    for (const suffix of ["", ` (${IN_FLIGHT} in flight)`]) {
      const ratio = best.get(`RedisEventStore${suffix}`)!.rps /
        best.get(`raw Redis INCR+XADD${suffix}`)!.rps;
      console.error(`RedisEventStore / raw INCR+XADD${suffix}: ${(100 * ratio).toFixed(0)}%`);
    }
    await store.close();
  } finally {
    kv.close();
    raw.close();
    redis.close();
    await server.stop();
    await Deno.remove(dir, { recursive: true });
  }
}
