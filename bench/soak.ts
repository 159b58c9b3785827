/**
 * Soak of the hostile-client bounds (issue 15, items 1-4), loopback only and
 * bounded in count and time. Starts `cli serve examples/hello.ts --http`
 * (with `--body-timeout`), and for each attack measures the server's RSS
 * (from /proc) and the median latency of normal stateless `tools/call`
 * requests while the attack holds:
 *
 * - `idle`: `--connections` connections that connect and send nothing
 *   (item 1: `Deno.serve` has no idle or header timeout, so they stay open;
 *   with `--timeouts=MS` the cli serves on `node:http` with `--header-timeout`
 *   and `--idle-timeout` of MS, and the row counts the connections the server
 *   closed within twice that).
 * - `slow-bodies`: `--connections` POSTs that announce 4 MiB and send one byte
 *   (items 1 and 2: memory follows bytes received; the body timeout answers
 *   408 and closes them, counted after `--body-timeout` has passed).
 * - `session-flood`: one address (127.0.0.1) opens `--sessions` finished
 *   sessions as fast as it can while a second address (127.0.0.2) opens a
 *   session and calls a tool (item 4: the per-client cap); its latency is
 *   the second client's handshake + call.
 * - `streams` (item 3): `bench/soak_streams.ts` run as its own process
 *   (20 SSE streams whose clients stop reading).
 *
 * Prints one JSON line per attack.
 *
 *     deno run -A bench/soak.ts --connections=1000 --sessions=10000 --body-timeout=5000
 *     deno run -A bench/soak.ts --timeouts=2000     # the same on the node:http listener
 *
 * @module
 */

import { connect } from "node:net";
import { statelessCall } from "./wire.ts";

const flag = (name: string, fallback: number) =>
  Number(Deno.args.find((arg) => arg.startsWith(`--${name}=`))?.split("=")[1] ?? fallback);
const CONNECTIONS = flag("connections", 1000);
const SESSIONS = flag("sessions", 10_000);
const BODY_TIMEOUT_MS = flag("body-timeout", 5000);
const TIMEOUTS_MS = flag("timeouts", 0);
const ROOT = new URL("..", import.meta.url);

const child = new Deno.Command(Deno.execPath(), {
  args: [
    "run",
    "-A",
    "cli/main.ts",
    "serve",
    "examples/hello.ts",
    "--http",
    "--port",
    "0",
    "--body-timeout",
    String(BODY_TIMEOUT_MS),
    ...(TIMEOUTS_MS > 0
      ? ["--header-timeout", String(TIMEOUTS_MS), "--idle-timeout", String(TIMEOUTS_MS)]
      : []),
  ],
  cwd: ROOT,
  stdout: "null",
  stderr: "piped",
}).spawn();
const reader = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
let seen = "";
while (!seen.includes("listening on")) seen += (await reader.read()).value ?? "";
const url = seen.match(/listening on (\S+)/)![1];
const port = Number(new URL(url).port);
// Drain the rest of stderr so the child never blocks on it.
(async () => {
  while (!(await reader.read()).done);
})();

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const rssMB = async () => {
  const status = await Deno.readTextFile(`/proc/${child.pid}/status`);
  return Math.round(Number(status.match(/VmRSS:\s+(\d+)/)![1]) / 1024);
};
const median = (times: number[]) => {
  times.sort((a, b) => a - b);
  return Number(times[Math.floor(times.length / 2)].toFixed(2));
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
  return median(times);
};
const report = (attack: string, facts: Record<string, unknown>) =>
  console.log(JSON.stringify({ attack, ...facts }));

await latency(200); // warm
const quietMs = await latency(200);
report("none", { rssMB: await rssMB(), latencyMs: quietMs });

// Item 1: idle connections.
{
  const before = await rssMB();
  const sockets: Deno.Conn[] = [];
  for (let i = 0; i < CONNECTIONS; i++) {
    sockets.push(await Deno.connect({ hostname: "127.0.0.1", port }));
  }
  // Each socket: whether the server closed it (read ends) within twice the timeouts.
  const closed = sockets.map(async (socket) => {
    if (TIMEOUTS_MS === 0) return false;
    const bound = sleep(TIMEOUTS_MS * 2).then(() => false);
    const end = socket.read(new Uint8Array(64)).then((n) => n === null, () => true);
    return await Promise.race([end, bound]);
  });
  await sleep(Math.min(1000, TIMEOUTS_MS || 1000) / 2);
  const during = await rssMB();
  const attackedMs = await latency(200);
  const closedByServer = (await Promise.all(closed)).filter(Boolean).length;
  for (const socket of sockets) socket.close();
  report("idle", {
    connections: CONNECTIONS,
    timeoutsMs: TIMEOUTS_MS || "none",
    rssBeforeMB: before,
    rssDuringMB: during,
    latencyQuietMs: quietMs,
    latencyUnderAttackMs: attackedMs,
    closedByServer,
  });
}

// Items 1 and 2: bodies announced at 4 MiB, one byte sent.
{
  const before = await rssMB();
  const head = new TextEncoder().encode(
    `POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\ncontent-type: application/json\r\n` +
      `accept: application/json, text/event-stream\r\ncontent-length: ${4 * 1024 * 1024}\r\n\r\n{`,
  );
  const timedOut: Promise<boolean>[] = [];
  for (let i = 0; i < CONNECTIONS; i++) {
    const socket = await Deno.connect({ hostname: "127.0.0.1", port });
    await socket.write(head);
    timedOut.push((async () => {
      const buffer = new Uint8Array(1024);
      let text = "";
      try {
        for (let n = await socket.read(buffer); n !== null; n = await socket.read(buffer)) {
          text += new TextDecoder().decode(buffer.subarray(0, n));
          if (text.includes("Request Timeout")) break;
        }
      } catch {
        // reset: counted as not answered
      } finally {
        socket.close();
      }
      return text.startsWith("HTTP/1.1 408");
    })());
  }
  await sleep(1000);
  const during = await rssMB();
  const attackedMs = await latency(200);
  const answered = await Promise.race([
    Promise.all(timedOut),
    sleep(BODY_TIMEOUT_MS * 2 + 5000).then(() => [] as boolean[]),
  ]);
  await sleep(500);
  report("slow-bodies", {
    connections: CONNECTIONS,
    announcedBytes: 4 * 1024 * 1024,
    rssBeforeMB: before,
    rssDuringMB: during,
    rssAfterMB: await rssMB(),
    latencyQuietMs: quietMs,
    latencyUnderAttackMs: attackedMs,
    answered408: answered.filter(Boolean).length,
  });
}

/** One raw HTTP/1.1 exchange from a chosen local address (Connection: close). */
function rawPost(
  localAddress: string,
  body: string,
  headers: Record<string, string>,
): Promise<{ status: number; headers: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: "127.0.0.1", port, localAddress }, () => {
      const lines = Object.entries({
        host: `127.0.0.1:${port}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "content-length": String(new TextEncoder().encode(body).byteLength),
        connection: "close",
        ...headers,
      }).map(([name, value]) => `${name}: ${value}\r\n`).join("");
      socket.write(`POST /mcp HTTP/1.1\r\n${lines}\r\n${body}`);
    });
    let text = "";
    socket.on("data", (chunk: Uint8Array) => text += new TextDecoder().decode(chunk));
    socket.on("error", reject);
    socket.on("close", () => {
      const end = text.indexOf("\r\n\r\n");
      resolve({
        status: Number(text.slice(9, 12)),
        headers: text.slice(0, end),
        body: text.slice(end + 4),
      });
    });
  });
}

const initialize = (id: number) =>
  JSON.stringify({
    jsonrpc: "2.0",
    id,
    method: "initialize",
    params: {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "soak", version: "1" },
    },
  });
const initialized = JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" });

/** A finished handshake and one tools/call from `address`; its status and the time it took. */
async function secondClient(address: string): Promise<{ ok: boolean; ms: number }> {
  const started = performance.now();
  const opened = await rawPost(address, initialize(1), {});
  const session = opened.headers.match(/mcp-session-id: (\S+)/i)?.[1];
  if (opened.status !== 200 || !session) return { ok: false, ms: performance.now() - started };
  await rawPost(address, initialized, { "mcp-session-id": session });
  const call = await rawPost(
    address,
    JSON.stringify({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "echo", arguments: { text: "hi" } },
    }),
    { "mcp-session-id": session },
  );
  return {
    ok: call.status === 200 && call.body.includes("echo: hi"),
    ms: performance.now() - started,
  };
}

// Item 4: one address floods finished sessions; another still gets in.
{
  const before = await rssMB();
  let sent = 0;
  const statuses: Record<number, number> = {};
  const flooder = async () => {
    while (sent < SESSIONS) {
      sent++;
      const { body, headers } = {
        body: initialize(sent),
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
        },
      };
      const response = await fetch(url, { method: "POST", headers, body });
      await response.body?.cancel();
      statuses[response.status] = (statuses[response.status] ?? 0) + 1;
      const session = response.headers.get("mcp-session-id");
      if (session) {
        const done = await fetch(url, {
          method: "POST",
          headers: { ...headers, "mcp-session-id": session },
          body: initialized,
        });
        await done.body?.cancel();
      }
    }
  };
  const flood = Promise.all(Array.from({ length: 16 }, flooder));
  const seconds: { ok: boolean; ms: number }[] = [];
  while (sent < SESSIONS) {
    seconds.push(await secondClient("127.0.0.2"));
    await sleep(50);
  }
  await flood;
  const during = await rssMB();
  const attackedMs = await latency(200);
  seconds.push(await secondClient("127.0.0.2"));
  report("session-flood", {
    sessions: SESSIONS,
    floodStatuses: statuses,
    rssBeforeMB: before,
    rssAfterFloodMB: during,
    latencyQuietMs: quietMs,
    latencyAfterFloodMs: attackedMs,
    secondClientTries: seconds.length,
    secondClientSucceeded: seconds.filter((s) => s.ok).length,
    secondClientMedianMs: median(seconds.map((s) => s.ms)),
  });
}

child.kill("SIGTERM");
await child.status;

// Item 3: streams whose clients stop reading (its own process).
const streams = await new Deno.Command(Deno.execPath(), {
  args: ["run", "-A", "bench/soak_streams.ts", "--streams=20", "--seconds=10"],
  cwd: ROOT,
  stdout: "piped",
  stderr: "inherit",
}).output();
const line = new TextDecoder().decode(streams.stdout).trim().split("\n").at(-1) ?? "{}";
console.log(JSON.stringify({ attack: "streams", ...JSON.parse(line) }));
