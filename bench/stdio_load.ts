/**
 * stdio load: spawns a server as a child process and keeps a fixed number of
 * stateless `tools/call` requests in flight over its stdin/stdout for a fixed
 * time, timing each round trip by id. The warm-up starts at the first answer,
 * so a server that starts slowly (a cold module cache) is not measured idle.
 *
 * @module
 */

import { type LoadShape, type Measurement, percentileOf } from "./measurement.ts";
import { endProcess, ROOT, track } from "./process.ts";
import { statelessCall } from "./wire.ts";

/** How long a server may take to give its first answer. */
const START_BOUND_MS = 60_000;

/**
 * Runs `deno <args>` as a stdio server and measures round trips.
 *
 * @param args The arguments after `deno`.
 * @param shape Requests in flight and duration.
 * @returns The measurement.
 */
export async function loadStdio(args: string[], shape: LoadShape): Promise<Measurement> {
  const child = new Deno.Command(Deno.execPath(), {
    args,
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

  const send = (count: number) => {
    let out = "";
    for (let i = 0; i < count; i++) {
      const id = nextId++;
      sentAt.set(id, performance.now());
      out += statelessCall(id).body + "\n";
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
  measuring = true;
  measureStart = performance.now();
  await new Promise((resolve) => setTimeout(resolve, shape.seconds * 1000));
  measuring = false;
  measureEnd = performance.now();
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
  };
}
