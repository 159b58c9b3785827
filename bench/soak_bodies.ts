/**
 * Soak: clients that announce a large body and send one byte. Starts
 * `cli serve examples/hello.ts --http` on loopback, opens `--connections`
 * raw connections that each POST with `Content-Length: 4194304` and send one
 * byte of the body, then measures the server's RSS (from /proc) and the
 * latency of normal `tools/call` requests meanwhile, and prints one JSON line.
 *
 *     deno run -A bench/soak_bodies.ts --connections=1000
 *
 * @module
 */

import { statelessCall } from "./wire.ts";

const flag = (name: string, fallback: number) =>
  Number(Deno.args.find((arg) => arg.startsWith(`--${name}=`))?.split("=")[1] ?? fallback);
const CONNECTIONS = flag("connections", 1000);
const ANNOUNCED = flag("announced", 4 * 1024 * 1024);
const ROOT = new URL("..", import.meta.url);

const child = new Deno.Command(Deno.execPath(), {
  args: ["run", "-A", "cli/main.ts", "serve", "examples/hello.ts", "--http", "--port", "0"],
  cwd: ROOT,
  stdout: "null",
  stderr: "piped",
}).spawn();
const reader = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
let seen = "";
while (!seen.includes("\n")) seen += (await reader.read()).value ?? "";
const url = seen.match(/listening on (\S+)/)![1];
const port = Number(new URL(url).port);

const rssMB = async () => {
  const status = await Deno.readTextFile(`/proc/${child.pid}/status`);
  return Number(status.match(/VmRSS:\s+(\d+)/)![1]) / 1024;
};
/** Median latency of `count` sequential normal requests, in ms. */
const latency = async (count: number) => {
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    const { body, headers } = statelessCall(i);
    const response = await fetch(url, { method: "POST", headers, body });
    if (response.status !== 200) throw new Error(`a normal request got ${response.status}`);
    await response.text();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
};

await latency(200); // warm
const before = await rssMB();
const quietMs = await latency(200);
const head = new TextEncoder().encode(
  `POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\ncontent-type: application/json\r\n` +
    `accept: application/json, text/event-stream\r\ncontent-length: ${ANNOUNCED}\r\n\r\n{`,
);
const sockets: Deno.Conn[] = [];
for (let i = 0; i < CONNECTIONS; i++) {
  const socket = await Deno.connect({ hostname: "127.0.0.1", port });
  await socket.write(head);
  sockets.push(socket);
}
await new Promise((resolve) => setTimeout(resolve, 2000));
const during = await rssMB();
const attackedMs = await latency(200);
for (const socket of sockets) socket.close();
await new Promise((resolve) => setTimeout(resolve, 1000));
const after = await rssMB();
child.kill("SIGTERM");
await child.status;
console.log(JSON.stringify({
  connections: CONNECTIONS,
  announcedBytes: ANNOUNCED,
  rssBeforeMB: Math.round(before),
  rssDuringMB: Math.round(during),
  rssGrowthMB: Math.round(during - before),
  rssAfterMB: Math.round(after),
  latencyQuietMs: Number(quietMs.toFixed(2)),
  latencyUnderAttackMs: Number(attackedMs.toFixed(2)),
}));
