// Session creation from one client process, the way a Node program does it:
// CONCURRENCY loops, each `fetch` (keep-alive) of initialize, then of
// notifications/initialized with the returned Mcp-Session-Id. Runs under
// `node` or `deno run`; prints one `BENCH {...}` line like bench/lua/report.lua,
// with this process's own CPU time (process.cpuUsage) over the measured window.
//
// node sessions_client.mjs URL CONCURRENCY WARMUP_S SECONDS INITIALIZE_BODY INITIALIZED_BODY VERSION
import process from "node:process";

const [url, concurrency, warmup, seconds, initializeBody, initializedBody, version] = process
  .argv.slice(2);
const base = {
  "content-type": "application/json",
  "accept": "application/json, text/event-stream",
};
const started = performance.now();
const measureFrom = started + Number(warmup) * 1000;
const end = measureFrom + Number(seconds) * 1000;
const latencies = [];
const counts = { requests: 0, sessions: 0, checked: 0, bad: 0, socket: 0 };
let first;
let cpuAtStart;

function bad(why, status, body) {
  counts.bad++;
  first ??= `${why}: status ${status}, body ${String(body).slice(0, 200)}`;
}

function message(text) {
  const trimmed = text.trim();
  if (trimmed.startsWith("{")) return JSON.parse(trimmed);
  const data = trimmed.split("\n").filter((line) => line.startsWith("data:"))
    .map((line) => line.slice(5).trim()).filter((line) => line.startsWith("{"));
  return data.length ? JSON.parse(data[data.length - 1]) : undefined;
}

async function post(headers, body) {
  const at = performance.now();
  const response = await fetch(url, { method: "POST", headers, body });
  const text = await response.text();
  const done = performance.now();
  const measured = at >= measureFrom && done <= end;
  if (measured) {
    counts.requests++;
    latencies.push(done - at);
  }
  return { response, text, measured };
}

async function loop() {
  while (performance.now() < end) {
    try {
      const init = await post(base, initializeBody);
      const id = init.response.headers.get("mcp-session-id");
      let result;
      try {
        result = message(init.text);
      } catch { /* counted below */ }
      if (init.measured) counts.checked++;
      if (init.response.status !== 200 || result?.id !== 1 || !result?.result?.protocolVersion) {
        if (init.measured) bad("initialize failed", init.response.status, init.text);
        continue;
      }
      if (!id) {
        if (init.measured) bad("no Mcp-Session-Id", init.response.status, init.text);
        continue;
      }
      const headers = { ...base, "mcp-protocol-version": version, "mcp-session-id": id };
      const ack = await post(headers, initializedBody);
      if (ack.measured) {
        counts.checked++;
        if (ack.response.status !== 202 || ack.text.trim()) {
          bad("initialized not 202", ack.response.status, ack.text);
        } else counts.sessions++;
      }
    } catch {
      counts.socket++;
    }
  }
}

// The orchestrator reads the server's CPU time when this line comes.
setTimeout(() => {
  cpuAtStart = process.cpuUsage();
  console.log("MEASURING");
}, Math.max(0, measureFrom - performance.now()));
await Promise.all(Array.from({ length: Number(concurrency) }, loop));
const cpu = process.cpuUsage(cpuAtStart);
latencies.sort((a, b) => a - b);
const at = (p) =>
  latencies.length
    ? latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))]
    : 0;
console.log(
  "BENCH " + JSON.stringify({
    requests: counts.requests,
    duration_us: Math.round(Number(seconds) * 1e6),
    p50_us: Math.round(at(0.5) * 1000),
    p99_us: Math.round(at(0.99) * 1000),
    non2xx: 0,
    socket_errors: counts.socket,
    client_cpu_us: cpu.user + cpu.system,
    sessions: counts.sessions,
    checked: counts.checked,
    bad_bodies: counts.bad,
    first_bad_body: first,
  }),
);
