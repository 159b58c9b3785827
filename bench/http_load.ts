/**
 * HTTP load from a separate process: wrk (Debian's `wrk`) with the Lua
 * scripts in `bench/lua/`, fixed connections and duration. Each script ends
 * with one `BENCH {...}` line that this module reads.
 *
 * @module
 */

import type { LoadShape, Measurement } from "./measurement.ts";
import { ROOT, ticksToMicros } from "./process.ts";
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
