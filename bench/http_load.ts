/**
 * HTTP load from a separate process: wrk (Debian's `wrk`) with the Lua
 * scripts in `bench/lua/`, fixed connections and duration. Each script ends
 * with one `BENCH {...}` line that this module reads.
 *
 * @module
 */

import type { LoadShape, Measurement } from "./measurement.ts";
import { cpuMicros, ROOT, ticksToMicros, track, watchBusiestThread } from "./process.ts";
import { legacyInitialize, legacyInitialized, type WireRequest } from "./wire.ts";

const LUA_DIR = `${ROOT}bench/lua`;

/**
 * Whether wrk is installed.
 *
 * @returns True when `wrk` runs.
 */
export async function haveWrk(): Promise<boolean> {
  try {
    const { code } = await new Deno.Command("wrk", {
      args: ["--version"],
      stdout: "null",
      stderr: "null",
    })
      .output();
    return code === 0 || code === 1; // wrk --version exits 1 after printing its version.
  } catch {
    return false;
  }
}

async function wrk(url: string, script: string, args: string[], shape: LoadShape, seconds: number) {
  const output = await new Deno.Command("wrk", {
    args: [
      "-t1",
      `-c${shape.connections}`,
      `-d${seconds}s`,
      "--timeout",
      "5s",
      "-s",
      script,
      url,
      "--",
      ...args,
    ],
    cwd: LUA_DIR,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(output.stdout);
  const line = text.split("\n").find((l) => l.startsWith("BENCH "));
  if (!output.success || !line) {
    throw new Error(`wrk failed: ${text}\n${new TextDecoder().decode(output.stderr)}`);
  }
  return JSON.parse(line.slice(6));
}

async function measure(
  url: string,
  script: string,
  args: string[],
  shape: LoadShape,
): Promise<Measurement> {
  // wrk takes whole seconds only.
  const warmup = Math.ceil(shape.warmupSeconds);
  if (warmup > 0) await wrk(url, script, args, shape, warmup);
  const r = await wrk(url, script, args, shape, Math.max(1, Math.round(shape.seconds)));
  const seconds = r.duration_us / 1e6;
  return {
    rps: r.requests / seconds,
    p50Ms: r.p50_us / 1000,
    p99Ms: r.p99_us / 1000,
    requests: r.requests,
    errors: r.non2xx + r.socket_errors,
    sessions: r.sessions === undefined ? undefined : r.sessions,
    seconds,
    clientCpuUs: r.client_cpu_ticks >= 0 ? ticksToMicros(r.client_cpu_ticks) : undefined,
    clientCores: r.client_threads,
    ...(shape.checkBodies
      ? { checked: r.checked ?? 0, badBodies: r.bad_bodies ?? 0, firstBadBody: r.first_bad_body }
      : {}),
  };
}

/**
 * Loads `url` with one fixed POST. With `shape.checkBodies`, every answer
 * must be a JSON-RPC result with the request's id containing
 * `request.expected` (JSON or SSE), and the failures are counted.
 *
 * @param url The endpoint.
 * @param request The request sent over and over.
 * @param shape Connections and duration.
 * @returns The measurement.
 */
export function loadPost(
  url: string,
  request: WireRequest,
  shape: LoadShape,
): Promise<Measurement> {
  const headers = Object.entries(request.headers).map(([name, value]) => `${name}: ${value}`);
  if (!shape.checkBodies) return measure(url, "post.lua", [request.body, ...headers], shape);
  const id = JSON.parse(request.body).id;
  if (typeof id !== "number" || request.expected === undefined) {
    throw new Error("a checked POST needs a numeric id and an expected text");
  }
  const expect = [String(id), request.expected];
  return measure(url, "post_checked.lua", [...expect, request.body, ...headers], shape);
}

/**
 * Opens sessions as fast as the server allows: `initialize`, then
 * `notifications/initialized` on the returned session. `rps` in the result
 * counts sessions opened per second (two requests each).
 *
 * @param url The endpoint.
 * @param version The protocol version the initialized notification carries.
 * @param shape Connections and duration.
 * @returns The measurement.
 */
export async function loadSessionCreation(
  url: string,
  version: string,
  shape: LoadShape,
): Promise<Measurement> {
  const args = [legacyInitialize().body, legacyInitialized().body, version];
  if (shape.checkBodies) args.push("check");
  const result = await measure(url, "sessions.lua", args, shape);
  const seconds = result.requests / result.rps;
  return { ...result, rps: (result.sessions ?? 0) / seconds };
}

/**
 * Session creation as a Node program makes it (the client the independent
 * figures in issue 21 used): `processes` client processes
 * (`clients/sessions_client.mjs` under `node`, or under `deno` without it),
 * each with `shape.connections / processes` keep-alive `fetch` loops of
 * `initialize` then `notifications/initialized`, answers always checked.
 * The client CPU is the processes' own (`process.cpuUsage()`), summed.
 * Each client warms up for `shape.warmupSeconds` first (at least 1 s: a
 * fresh process's first second is mostly its own start); with `serverPid`,
 * the server's CPU per request is read over the clients' measured window
 * only (see `cpuMicros`).
 *
 * @param url The endpoint.
 * @param version The protocol version the initialized notification carries.
 * @param shape Connections (loops in all) and duration.
 * @param node The `node` program, or undefined to run the client with this `deno`.
 * @param processes How many client processes.
 * @param serverPid The server's pid, for its CPU time over the window.
 * @returns The measurement; `rps` counts sessions per second.
 */
export async function loadSessionCreationFromNode(
  url: string,
  version: string,
  shape: LoadShape,
  node: string | undefined,
  processes = 1,
  serverPid?: number,
): Promise<Measurement> {
  const warmup = Math.max(1, shape.warmupSeconds);
  let started = 0;
  let cpuBefore = 0;
  let busiestThread: (() => number) | undefined;
  const measuring = () => {
    if (started++ !== 0 || serverPid === undefined) return;
    cpuBefore = cpuMicros(serverPid);
    busiestThread = watchBusiestThread(serverPid);
  };
  const script = `${ROOT}bench/clients/sessions_client.mjs`;
  const args = (loops: number) => [
    url,
    String(loops),
    String(warmup),
    String(shape.seconds),
    legacyInitialize().body,
    legacyInitialized().body,
    version,
  ];
  const runs = await Promise.all(
    Array.from({ length: processes }, async () => {
      const loops = Math.max(1, Math.round(shape.connections / processes));
      const command = node ?? Deno.execPath();
      const child = new Deno.Command(command, {
        args: node ? [script, ...args(loops)] : ["run", "-A", script, ...args(loops)],
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      track(child);
      const errors = new Response(child.stderr).text();
      let line: string | undefined;
      for await (const text of child.stdout.pipeThrough(new TextDecoderStream())) {
        for (const l of text.split("\n")) {
          if (l === "MEASURING") measuring();
          if (l.startsWith("BENCH ")) line = l;
        }
      }
      const status = await child.status;
      if (!status.success || !line) throw new Error(`session client failed: ${await errors}`);
      return JSON.parse(line.slice(6));
    }),
  );
  const serverCpu = serverPid === undefined ? undefined : cpuMicros(serverPid) - cpuBefore;
  const serverThreadShare = busiestThread?.();
  const sum = (key: string) => runs.reduce((total, run) => total + (run[key] ?? 0), 0);
  const seconds = shape.seconds;
  return {
    rps: sum("sessions") / seconds,
    // With several processes, the slowest process's percentiles.
    p50Ms: Math.max(...runs.map((run) => run.p50_us)) / 1000,
    p99Ms: Math.max(...runs.map((run) => run.p99_us)) / 1000,
    requests: sum("requests"),
    errors: sum("socket_errors"),
    sessions: sum("sessions"),
    seconds,
    clientCpuUs: sum("client_cpu_us"),
    clientCores: processes,
    checked: sum("checked"),
    badBodies: sum("bad_bodies"),
    firstBadBody: runs.find((run) => run.first_bad_body)?.first_bad_body,
    ...(serverCpu === undefined ? {} : { cpuUsPerRequest: serverCpu / sum("requests") }),
    ...(serverThreadShare === undefined ? {} : { serverThreadShare }),
  };
}
