/**
 * Same-run A/B of the bare HTTP handler across source trees: how a change
 * to this SDK moves the server's cost, measured the way the targets are
 * (wrk, 32 connections, one thread) but with the trees' servers taken in
 * turn for many short rounds and compared by the median server CPU time per
 * request, which moves much less with the machine's load than req/s.
 *
 * ```sh
 * git worktree add /tmp/before HEAD~1
 * deno task bench:ab /tmp/before .                       # stateless tools/call, 8 rounds of 2 s
 * deno task bench:ab --mode=sessions --rounds=10 /tmp/before .
 * deno task bench:ab /tmp/before .:bench/servers/raw_http.ts   # any server script of a tree
 * deno task bench:ab . .:cli/main.ts:serve,bench/servers/echo_server.ts,--http,--port,0
 * ```
 *
 * Each argument is a tree (a checkout of this repository), optionally
 * followed by `:` and the server script to run from it (default
 * `bench/servers/anubis_http.ts`) and by `:` and the script's arguments,
 * comma-separated (relative paths among them are the tree's); the script
 * runs with the tree's own `deno.json` and must print `listening on URL`
 * on stderr. Modes: `stateless` (2026-07-28 `tools/call`), `legacy`
 * (`tools/call` in one 2025-11-25 session), `sessions` (`initialize` +
 * `notifications/initialized`, the session bound raised). Each row also gives
 * the load generator's CPU per request (wrk's, from its `/proc/self/stat`)
 * and, with `--watch=PID`, that process's (an OTLP receiver's, say). Differences under
 * about 3% are noise on a shared 2-core machine: repeat before believing one.
 *
 * @module
 */

import { haveWrk, loadPost, loadSessionCreation } from "./http_load.ts";
import type { LoadShape } from "./measurement.ts";
import { cpuMicros, endAll, type RunningServer, startServer } from "./process.ts";
import { LEGACY_VERSION, legacyCall, openSession, statelessCall } from "./wire.ts";

type Mode = "stateless" | "legacy" | "sessions";

interface Contender {
  label: string;
  server: RunningServer;
  load: (seconds: number) => Promise<{ requests: number; rps: number; clientCpuUs?: number }>;
  cpu: number[];
  rps: number[];
  /** The load generator's CPU µs per request, each round. */
  client: number[];
  /** The watched process's (`--watch`) CPU µs per request, each round. */
  watched: number[];
}

const DEFAULT_SCRIPT = "bench/servers/anubis_http.ts";

function option(name: string, fallback: string): string {
  const found = Deno.args.find((arg) => arg.startsWith(`--${name}=`));
  return found === undefined ? fallback : found.slice(name.length + 3);
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

async function start(entry: string, mode: Mode): Promise<Contender> {
  const [tree, script = DEFAULT_SCRIPT, extra = ""] = entry.split(":");
  const root = await Deno.realPath(tree);
  const args = ["run", "-A", "--config", `${root}/deno.json`, `${root}/${script}`];
  // Paths among the script's own arguments are the tree's too.
  for (const arg of extra.split(",").filter(Boolean)) {
    args.push(arg.startsWith("-") || !arg.includes("/") ? arg : `${root}/${arg}`);
  }
  if (mode === "sessions") args.push("--max-sessions=100000000");
  const server = await startServer(args);
  const shape = (seconds: number): LoadShape => ({ connections: 32, seconds, warmupSeconds: 0 });
  let load: Contender["load"];
  if (mode === "sessions") {
    load = async (seconds) => {
      const measured = await loadSessionCreation(server.url, LEGACY_VERSION, shape(seconds));
      return { ...measured, rps: measured.requests / seconds };
    };
  } else {
    let request = statelessCall();
    if (mode === "legacy") {
      const { sessionId, version } = await openSession(server.url);
      request = legacyCall(sessionId, version);
    }
    load = (seconds) => loadPost(server.url, request, shape(seconds));
  }
  return { label: entry, server, load, cpu: [], rps: [], client: [], watched: [] };
}

async function main(): Promise<void> {
  const mode = option("mode", "stateless") as Mode;
  if (!["stateless", "legacy", "sessions"].includes(mode)) throw new Error(`unknown mode ${mode}`);
  const rounds = Number(option("rounds", "8"));
  const seconds = Number(option("seconds", "2"));
  const trees = Deno.args.filter((arg) => !arg.startsWith("--"));
  const watch = option("watch", "") ? Number(option("watch", "")) : undefined;
  if (trees.length === 0) throw new Error("name at least one tree (a checkout of this repository)");
  if (!(await haveWrk())) throw new Error("wrk is missing: apt-get install -y wrk");
  const contenders: Contender[] = [];
  try {
    for (const tree of trees) contenders.push(await start(tree, mode));
    for (const contender of contenders) await contender.load(1); // warm-up
    for (let round = 0; round < rounds; round++) {
      // Each round starts one tree later, so no tree always follows the same one.
      const start = round % contenders.length;
      const order = [...contenders.slice(start), ...contenders.slice(0, start)];
      for (const contender of order) {
        const before = cpuMicros(contender.server.pid);
        const watchedBefore = watch === undefined ? 0 : cpuMicros(watch);
        const measured = await contender.load(seconds);
        const used = cpuMicros(contender.server.pid) - before;
        if (measured.requests === 0) throw new Error(`${contender.label} answered nothing`);
        contender.cpu.push(used / measured.requests);
        contender.rps.push(measured.rps);
        if (measured.clientCpuUs !== undefined) {
          contender.client.push(measured.clientCpuUs / measured.requests);
        }
        if (watch !== undefined) {
          contender.watched.push((cpuMicros(watch) - watchedBefore) / measured.requests);
        }
      }
    }
  } finally {
    await endAll();
  }
  const baseline = median(contenders[0].cpu);
  console.log(`${mode}: ${rounds} rounds of ${seconds} s, servers in turn; per HTTP request`);
  for (const { label, cpu, rps, client, watched } of contenders) {
    const ratio = (median(cpu) / baseline).toFixed(3);
    const others = (client.length ? `  load CPU µs ${median(client).toFixed(1)}` : "") +
      (watched.length ? `  watched CPU µs ${median(watched).toFixed(1)}` : "");
    console.log(
      `${label}  req/s median ${median(rps).toFixed(0)}  CPU µs median ${median(cpu).toFixed(2)} ` +
        `min ${Math.min(...cpu).toFixed(2)}  (${ratio}× the first)${others}  [${
          cpu.map((c) => c.toFixed(1)).join(" ")
        }]`,
    );
  }
  console.log(`/proc/loadavg at the end: ${(await Deno.readTextFile("/proc/loadavg")).trim()}`);
}

if (import.meta.main) await main();
