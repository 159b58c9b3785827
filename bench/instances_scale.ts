/**
 * One instance against two on one shared KV file: `cli serve --http` with
 * both stores on KV, under wrk, for stateless `tools/call`, `tools/call` in
 * one legacy session (served by both instances), and session creation. Two
 * instances get two wrk processes at once (half the connections each); the
 * figure is their sum. Rounds take one and two instances in turn, best
 * round kept. Prints a Markdown table; not part of `deno task bench`.
 *
 * ```sh
 * deno run -A bench/instances_scale.ts                # about a minute and a half
 * deno run -A bench/instances_scale.ts --seconds=3 --rounds=2 --only=creation,session
 * deno run -A bench/instances_scale.ts --separate-files   # each instance its own KV file
 * ```
 *
 * @module
 */

import { loadPost, loadSessionCreation } from "./http_load.ts";
import type { LoadShape, Measurement } from "./measurement.ts";
import { cpuMicros, endAll, type RunningServer, startServer } from "./process.ts";
import { legacyCall, legacyInitialize, legacyInitialized, statelessCall } from "./wire.ts";

function flag(name: string, fallback: number): number {
  const found = Deno.args.find((a) => a.startsWith(`--${name}=`));
  return found ? Number(found.slice(name.length + 3)) : fallback;
}

const SECONDS = flag("seconds", 4);
const ROUNDS = flag("rounds", 2);
const CONNECTIONS = 32;
/** `--separate-files`: each instance on a KV file of its own (what sharing the file costs). */
const SEPARATE = Deno.args.includes("--separate-files");
const ONLY = Deno.args.find((a) => a.startsWith("--only="))?.slice("--only=".length).split(",");

type Mode = "stateless" | "session" | "creation";
const MODES: Record<Mode, string> = {
  stateless: "stateless `tools/call` (2026-07-28)",
  session: "`tools/call` in one legacy session",
  creation: "session creation (`initialize` + `initialized`)",
};

async function startInstances(n: number, dir: string): Promise<RunningServer[]> {
  const servers: RunningServer[] = [];
  for (let i = 0; i < n; i++) {
    const kvPath = SEPARATE ? `${dir}/${i}.kv` : `${dir}/a.kv`;
    servers.push(
      await startServer([
        "run",
        "-A",
        "cli/main.ts",
        "serve",
        "bench/servers/echo_server.ts",
        "--http",
        "--port",
        "0",
        "--event-store",
        `kv:${kvPath}`,
        "--session-store",
        `kv:${kvPath}`,
      ]),
    );
  }
  return servers;
}

/** A session opened at `url`, for the session mode. */
async function openSession(url: string): Promise<string> {
  const init = legacyInitialize();
  const response = await fetch(url, { method: "POST", headers: init.headers, body: init.body });
  await response.body?.cancel();
  const id = response.headers.get("mcp-session-id")!;
  const done = legacyInitialized(id);
  await (await fetch(url, { method: "POST", headers: done.headers, body: done.body })).body
    ?.cancel();
  return id;
}

function load(mode: Mode, url: string, sessionId: string, shape: LoadShape): Promise<Measurement> {
  if (mode === "creation") return loadSessionCreation(url, "2025-11-25", shape);
  return loadPost(url, mode === "stateless" ? statelessCall() : legacyCall(sessionId), shape);
}

interface Result {
  rps: number;
  cpuUsPerRequest: number;
  errors: number;
  cpuShare: number;
}

/** One round: `n` instances on a fresh KV file, each under its own wrk at once. */
async function round(mode: Mode, n: number): Promise<Result> {
  const dir = await Deno.makeTempDir({ prefix: "anubis-scale-" });
  const servers = await startInstances(n, dir);
  try {
    const sessionId = mode === "session" ? await openSession(servers[0].url) : "";
    const shape = { connections: CONNECTIONS / n, seconds: SECONDS, warmupSeconds: 1 };
    // Warm every instance up (and have each restore the session) before measuring.
    await Promise.all(
      servers.map((s) => load(mode, s.url, sessionId, { ...shape, seconds: 1, warmupSeconds: 0 })),
    );
    const cpuBefore = servers.map((s) => cpuMicros(s.pid));
    const began = performance.now();
    const measured = await Promise.all(
      servers.map((s) => load(mode, s.url, sessionId, { ...shape, warmupSeconds: 0 })),
    );
    const wallUs = (performance.now() - began) * 1000;
    const cpu = servers.reduce((sum, s, i) => sum + cpuMicros(s.pid) - cpuBefore[i], 0);
    const requests = measured.reduce((sum, m) => sum + m.requests, 0);
    return {
      rps: measured.reduce((sum, m) => sum + m.rps, 0),
      cpuUsPerRequest: cpu / requests,
      errors: measured.reduce((sum, m) => sum + m.errors, 0),
      cpuShare: cpu / wallUs,
    };
  } finally {
    for (const server of servers) await server.stop();
    await Deno.remove(dir, { recursive: true });
  }
}

const lines = [
  `| load | 1 instance req/s | 2 instances req/s | ratio | CPU µs/req 1 → 2 | server cores busy 1 → 2 | errors |`,
  `| --- | --- | --- | --- | --- | --- | --- |`,
];
try {
  for (const mode of Object.keys(MODES) as Mode[]) {
    if (ONLY && !ONLY.includes(mode)) continue;
    const best: Record<number, Result | undefined> = {};
    for (let r = 0; r < ROUNDS; r++) {
      for (const n of r % 2 === 0 ? [1, 2] : [2, 1]) {
        const result = await round(mode, n);
        if (!best[n] || result.rps > best[n]!.rps) best[n] = result;
      }
    }
    const [one, two] = [best[1]!, best[2]!];
    const unit = mode === "creation" ? " sessions/s" : "";
    lines.push(
      `| ${MODES[mode]} | ${Math.round(one.rps)}${unit} | ${Math.round(two.rps)}${unit} | ${
        (two.rps / one.rps).toFixed(2)
      }x | ${one.cpuUsPerRequest.toFixed(0)} → ${two.cpuUsPerRequest.toFixed(0)} | ${
        one.cpuShare.toFixed(2)
      } → ${two.cpuShare.toFixed(2)} | ${one.errors} / ${two.errors} |`,
    );
    console.error(lines.at(-1));
  }
} finally {
  await endAll();
}
console.log(lines.join("\n"));
console.log(`\nload average after: ${(await Deno.readTextFile("/proc/loadavg")).trim()}`);
