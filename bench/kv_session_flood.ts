/**
 * The item-5 flood of issue 30: one address sends `initialize` requests with
 * ~700 KB of `capabilities.experimental` (never finishing the handshake) for
 * a while, against `cli serve examples/everything.ts --http --session-store
 * kv:PATH`, and the KV file's growth is read before and after.
 *
 *   deno run -A bench/kv_session_flood.ts [repo root] [seconds] [concurrency]
 *
 * Prints one JSON line: requests, statuses, the KV file (and its -wal) in MB
 * before and after, and the session records left in KV (count, MB).
 */

const root = Deno.args[0] ?? new URL("..", import.meta.url).pathname;
const seconds = Number(Deno.args[1] ?? 16);
const concurrency = Number(Deno.args[2] ?? 8);
const dir = await Deno.makeTempDir();
const kvPath = `${dir}/flood.kv`;
const MB = 1024 * 1024;

const child = new Deno.Command(Deno.execPath(), {
  args: [
    "run",
    "-A",
    "cli/main.ts",
    "serve",
    "examples/everything.ts",
    "--http",
    "--port",
    "0",
    "--session-store",
    `kv:${kvPath}`,
  ],
  cwd: root,
  stdin: "null",
  stdout: "null",
  stderr: "piped",
}).spawn();
const reader = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
let seen = "";
const slow = setTimeout(() => child.kill("SIGKILL"), 30_000);
while (!/listening on \S+/.test(seen)) {
  const { value, done } = await reader.read();
  if (done) throw new Error(seen);
  seen += value;
}
clearTimeout(slow);
const draining = (async () => {
  while (!(await reader.read()).done);
})();
const url = seen.match(/listening on (\S+)/)![1];

async function size(path: string): Promise<number> {
  return await Deno.stat(path).then((info) => info.size, () => 0);
}
async function files() {
  return { kv: await size(kvPath), wal: await size(`${kvPath}-wal`) };
}
async function records() {
  const kv = await Deno.openKv(kvPath);
  let count = 0;
  let bytes = 0;
  for await (const entry of kv.list<Uint8Array>({ prefix: ["anubis", "sessions"] })) {
    if (entry.key.length === 3) count++;
    bytes += entry.value.byteLength;
  }
  kv.close();
  return { count, mb: +(bytes / MB).toFixed(1) };
}

const body = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: {
    protocolVersion: "2025-11-25",
    capabilities: { experimental: { pad: { data: "x".repeat(700_000) } } },
    clientInfo: { name: "flood", version: "0" },
  },
});
const before = await files();
const statuses: Record<number, number> = {};
let sent = 0;
const end = Date.now() + seconds * 1000;
await Promise.all(Array.from({ length: concurrency }, async () => {
  while (Date.now() < end) {
    sent++;
    const response = await fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body,
    });
    await response.body?.cancel();
    statuses[response.status] = (statuses[response.status] ?? 0) + 1;
  }
}));
await new Promise((resolve) => setTimeout(resolve, 1000)); // deletes still under way
const after = await files();
const left = await records();
child.kill("SIGTERM");
await child.status;
await draining;
await Deno.remove(dir, { recursive: true });
console.log(JSON.stringify({
  root,
  seconds,
  concurrency,
  requests: sent,
  statuses,
  beforeMB: { kv: +(before.kv / MB).toFixed(1), wal: +(before.wal / MB).toFixed(1) },
  afterMB: { kv: +(after.kv / MB).toFixed(1), wal: +(after.wal / MB).toFixed(1) },
  growthMB: +((after.kv + after.wal - before.kv - before.wal) / MB).toFixed(1),
  recordsLeft: left,
}));
