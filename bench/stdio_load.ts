/**
 * stdio load: spawns a server as a child process and keeps a fixed number of
 * `tools/call` requests in flight over its stdin/stdout for a fixed time,
 * timing each round trip by id: stateless (2026-07-28) calls, or calls in a
 * 2025-11-25 session opened first (`initialize`, then
 * `notifications/initialized`). The warm-up starts at the first answer, so a
 * server that starts slowly (a cold module cache) is not measured idle. The
 * child's CPU time over the measured window (from `/proc`) gives CPU per
 * round trip; its busiest thread's share and this process's own CPU (the
 * client's) say which side set the rate.
 *
 * @module
 */

import { type LoadShape, type Measurement, percentileOf } from "./measurement.ts";
import { cpuUsage } from "node:process";
import { cpuMicros, endProcess, ROOT, track, watchBusiestThread } from "./process.ts";
import { LEGACY_VERSION, legacyCall, legacyInitialize, statelessCall } from "./wire.ts";

/** The era of the calls sent: stateless `_meta` calls, or calls in one legacy session. */
export type StdioEra = "stateless" | "legacy";

/** How long a server may take to give its first answer. */
const START_BOUND_MS = 60_000;

/**
 * The cores a stdio run pins its two sides to, when `taskset` runs and the
 * machine has two cores or more: the server on one, this process (the client)
 * on another. Left to the scheduler, the two sides of a ping-pong sometimes
 * share a core and sometimes not, and the same server's rate moved by a
 * third between rounds; pinned, it moves by a few percent.
 */
const PINNED = await pinnedCores();

async function pinnedCores(): Promise<{ client: string; server: string; all: string } | undefined> {
  if (navigator.hardwareConcurrency < 2) return undefined;
  try {
    const { success, stdout } = await new Deno.Command("taskset", {
      args: ["-c", "-p", String(Deno.pid)],
      stderr: "null",
    }).output();
    // "pid 123's current affinity list: 0,1"
    const all = new TextDecoder().decode(stdout).trim().split(": ").at(-1);
    return success && all ? { client: "0", server: "1", all } : undefined;
  } catch {
    return undefined; // no taskset
  }
}

async function pinSelf(cores: string): Promise<void> {
  await new Deno.Command("taskset", {
    args: ["-a", "-c", "-p", cores, String(Deno.pid)],
    stdout: "null",
    stderr: "null",
  }).output();
}

/**
 * Runs `deno <args>` as a stdio server and measures round trips.
 *
 * @param args The arguments after `deno`.
 * @param shape Requests in flight and duration.
 * @param era Stateless calls (default), or calls in a legacy session opened first.
 * @returns The measurement.
 */
export async function loadStdio(
  args: string[],
  shape: LoadShape,
  era: StdioEra = "stateless",
): Promise<Measurement> {
  if (!PINNED) return await roundTrips(args, shape, era);
  await pinSelf(PINNED.client);
  try {
    return await roundTrips(args, shape, era);
  } finally {
    await pinSelf(PINNED.all);
  }
}

async function roundTrips(
  args: string[],
  shape: LoadShape,
  era: StdioEra,
): Promise<Measurement> {
  const child = new Deno.Command(PINNED ? "taskset" : Deno.execPath(), {
    // taskset execs deno: the child's pid is the server's.
    args: PINNED ? ["-c", PINNED.server, Deno.execPath(), ...args] : args,
    cwd: ROOT,
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  track(child);
  const writer = child.stdin.getWriter();
  const encoder = new TextEncoder();
  const sentAt = new Map<number, number>();
  let nextId = 1;
  let measuring = false;
  let stopping = false;
  const latencies: number[] = [];
  let errors = 0;
  let measureStart = 0;
  let measureEnd = 0;
  let completed = 0;
  let firstAnswer!: () => void;
  const answering = new Promise<void>((resolve) => firstAnswer = resolve);
  let initialized!: (result: unknown) => void;
  const handshake = new Promise((resolve) => initialized = resolve);
  // The legacy call's body with a placeholder id; each call swaps its own in.
  const legacyBody = legacyCall(undefined, LEGACY_VERSION, 0).body;
  const body = era === "legacy"
    ? (id: number) => legacyBody.replace('"id":0', `"id":${id}`)
    : (id: number) => statelessCall(id).body;

  const send = (count: number) => {
    let out = "";
    for (let i = 0; i < count; i++) {
      const id = nextId++;
      sentAt.set(id, performance.now());
      out += body(id) + "\n";
    }
    return writer.write(encoder.encode(out));
  };

  const reading = (async () => {
    let buffered = "";
    for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
      buffered += chunk;
      const lines = buffered.split("\n");
      buffered = lines.pop() ?? "";
      let answered = 0;
      for (const line of lines) {
        if (!line) continue;
        const message = JSON.parse(line);
        if (message.id === "initialize") {
          initialized(message.result);
          continue;
        }
        const started = sentAt.get(message.id);
        if (started === undefined) continue; // A notification.
        sentAt.delete(message.id);
        answered++;
        if (!message.result || message.result.isError) errors++;
        if (measuring) {
          latencies.push(performance.now() - started);
          completed++;
        }
      }
      if (answered > 0) firstAnswer();
      if (answered > 0 && !stopping) await send(answered);
      if (stopping && sentAt.size === 0) return;
    }
  })();

  const warmupMs = shape.warmupSeconds * 1000;
  if (era === "legacy") {
    await writer.write(encoder.encode(legacyInitialize("initialize").body + "\n"));
    let bound: ReturnType<typeof setTimeout> | undefined;
    const result = await Promise.race([
      handshake,
      new Promise((resolve) => bound = setTimeout(resolve, START_BOUND_MS)),
    ]);
    clearTimeout(bound);
    if (result === undefined) throw new Error("stdio load: initialize got no result");
    const done = JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" });
    await writer.write(encoder.encode(done + "\n"));
  }
  await send(shape.connections);
  // Bounded: a server that never answers is measured as answering nothing.
  let startBound: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([
    answering,
    reading,
    new Promise((resolve) => startBound = setTimeout(resolve, START_BOUND_MS)),
  ]);
  clearTimeout(startBound);
  await new Promise((resolve) => setTimeout(resolve, warmupMs));
  const cpuStart = cpuMicros(child.pid);
  const busiestThread = watchBusiestThread(child.pid);
  const clientStart = cpuUsage();
  measuring = true;
  measureStart = performance.now();
  await new Promise((resolve) => setTimeout(resolve, shape.seconds * 1000));
  measuring = false;
  measureEnd = performance.now();
  const cpu = cpuMicros(child.pid) - cpuStart;
  const client = cpuUsage(clientStart);
  const seconds = (measureEnd - measureStart) / 1000;
  const serverThreadShare = busiestThread();
  stopping = true;
  await Promise.race([reading, new Promise((resolve) => setTimeout(resolve, 5000))]);
  await writer.close().catch(() => {});
  await endProcess(child);
  latencies.sort((a, b) => a - b);
  return {
    rps: completed / ((measureEnd - measureStart) / 1000),
    p50Ms: percentileOf(latencies, 50),
    p99Ms: percentileOf(latencies, 99),
    requests: completed,
    errors,
    cpuUsPerRequest: completed > 0 ? cpu / completed : undefined,
    seconds,
    // This process is the client: its own CPU over the window, on one core.
    clientCpuUs: client.user + client.system,
    clientCores: 1,
    serverThreadShare,
  };
}
