/**
 * Soak: what one client can make a default `cli serve examples/everything.ts
 * --http` (no flags) hold in memory, read from /proc. `init`: 1,000
 * `initialize` requests with ~4 MB of `capabilities.experimental` from one
 * address (8 at a time), then 1,000 with ~40 KB (allowed) capabilities, each
 * handshake finished. `bodies`: 200 connections each sending all but the last
 * byte of a 4 MiB - 1 byte body (with `Mcp-Method`, so it is read: without it
 * nor `Mcp-Session-Id` it could only be an initialize, refused past 1 MiB),
 * held until the server answers (429 or 503 past the body budget, 408 at the
 * body timeout). After each, a new session and a
 * `tools/call` must still be served. Prints what it measured; bounded in
 * count and time (a few minutes); not part of CI.
 *
 *     deno run -A bench/soak_memory.ts [checkout] [init|bodies|both]
 *
 * @module
 */

import { legacyCall, openSession, post } from "./wire.ts";

const ROOT = Deno.args[0] ?? new URL("..", import.meta.url).pathname;
const which = Deno.args[1] ?? "both";
const child = new Deno.Command(Deno.execPath(), {
  args: ["run", "-A", "cli/main.ts", "serve", "examples/everything.ts", "--http", "--port", "0"],
  cwd: ROOT,
  stdin: "null",
  stdout: "null",
  stderr: "piped",
}).spawn();
const reader = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
let seen = "";
while (!seen.includes("\n")) seen += (await reader.read()).value ?? "";
const logTail: string[] = [];
(async () => {
  for (;;) {
    const r = await reader.read();
    if (r.done) break;
    logTail.push(r.value);
    if (logTail.length > 50) logTail.shift();
  }
})();
const url = seen.match(/listening on (\S+)/)![1];
const port = Number(new URL(url).port);
const rss = async () =>
  Number((await Deno.readTextFile(`/proc/${child.pid}/status`)).match(/VmRSS:\s+(\d+)/)![1]) / 1024;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const H = { "content-type": "application/json", accept: "application/json, text/event-stream" };
/** A new session and a tool call in it, as a client that just arrived would make. */
async function healthy(): Promise<string> {
  try {
    const { sessionId, version } = await openSession(url);
    const call = legacyCall(sessionId, version, 2);
    call.body = JSON.stringify({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "test_simple_text", arguments: {} },
    });
    const { status, message } = await post(url, call);
    return `a new session's tools/call: ${status} ${message.result ? "ok" : "failed"}`;
  } catch (error) {
    return `a new session failed: ${(error as Error).message}`;
  }
}
await sleep(500);
const base = await rss();
console.log(`baseline RSS ${base.toFixed(0)} MB; ${await healthy()}`);

if (which === "both" || which === "init") {
  const big = "x".repeat(4 * 1000 * 1000);
  const statuses = new Map<number, number>();
  let peak = base;
  const t0 = performance.now();
  let next = 0;
  const worker = async () => {
    while (next < 1000) {
      const i = next++;
      const body =
        `{"jsonrpc":"2.0","id":${i},"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"experimental":{"big":{"v":"${big}"}}},"clientInfo":{"name":"c","version":"1"}}}`;
      const r = await fetch(url, { method: "POST", headers: H, body });
      await r.body?.cancel();
      statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
      if (i % 50 === 0) peak = Math.max(peak, await rss());
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  const after = await rss();
  console.log(
    `(a) 1000 initializes with 4 MB capabilities in ${
      ((performance.now() - t0) / 1000).toFixed(1)
    } s: statuses ${JSON.stringify([...statuses])}; RSS peak ${
      Math.max(peak, after).toFixed(0)
    } MB (+${(Math.max(peak, after) - base).toFixed(0)}), after ${after.toFixed(0)} MB (+${
      (after - base).toFixed(0)
    }); ${await healthy()}`,
  );
  // Allowed-size capabilities: ~60 KB of JSON, flood from one address.
  const mid = "y".repeat(20_000);
  const st2 = new Map<number, number>();
  const b2 = await rss();
  for (let i = 0; i < 1000; i++) {
    const body =
      `{"jsonrpc":"2.0","id":${i},"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"experimental":{"v":"${mid}"}},"clientInfo":{"name":"c","version":"1"}}}`;
    const r = await fetch(url, { method: "POST", headers: H, body });
    const sid = r.headers.get("mcp-session-id");
    await r.body?.cancel();
    st2.set(r.status, (st2.get(r.status) ?? 0) + 1);
    if (sid) {
      const n = await fetch(url, {
        method: "POST",
        headers: { ...H, "mcp-session-id": sid, "mcp-protocol-version": "2025-06-18" },
        body: '{"jsonrpc":"2.0","method":"notifications/initialized"}',
      });
      await n.body?.cancel();
    }
  }
  const a2 = await rss();
  console.log(
    `(a2) 1000 initializes with 40 KB-string capabilities (allowed), initialized: statuses ${
      JSON.stringify([...st2])
    }; RSS ${b2.toFixed(0)} -> ${a2.toFixed(0)} MB (+${(a2 - b2).toFixed(0)}); ${await healthy()}`,
  );
}

if (which === "both" || which === "bodies") {
  const b0 = await rss();
  const length = 4 * 1024 * 1024 - 1;
  const head = new TextEncoder().encode(
    `POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\nmcp-method: tools/call\r\ncontent-length: ${length}\r\n\r\n`,
  );
  const chunk = new Uint8Array(length - 1).fill(0x20);
  chunk[0] = 0x5b; // "["
  const sockets: Deno.Conn[] = [];
  const answers: Promise<string>[] = [];
  const t0 = performance.now();
  await Promise.all(Array.from({ length: 200 }, async () => {
    const s = await Deno.connect({ hostname: "127.0.0.1", port });
    sockets.push(s);
    await s.write(head);
    answers.push((async () => {
      const buf = new Uint8Array(4096);
      try {
        const n = await s.read(buf);
        return n === null
          ? "closed"
          : new TextDecoder().decode(buf.subarray(0, n)).split("\r\n")[0];
      } catch (e) {
        return `error ${(e as Error).name}`;
      }
    })());
    try {
      let off = 0;
      while (off < chunk.length) off += await s.write(chunk.subarray(off));
    } catch { /* refused mid-body */ }
  }));
  const during = await rss();
  console.log(
    `(b) 200 bodies sent (all but their last byte) in ${
      ((performance.now() - t0) / 1000).toFixed(1)
    } s: RSS ${b0.toFixed(0)} -> ${during.toFixed(0)} MB (+${
      (during - b0).toFixed(0)
    }); ${await healthy()}`,
  );
  let peak = during;
  const statuses = new Map<string, number>();
  const settled = Promise.all(answers.map(async (a) => {
    const s = await a;
    statuses.set(s, (statuses.get(s) ?? 0) + 1);
  }));
  while (await Promise.race([settled.then(() => true), sleep(1000).then(() => false)]) === false) {
    peak = Math.max(peak, await rss());
  }
  const after = await rss();
  console.log(
    `(b) answers ${JSON.stringify([...statuses])}; RSS peak ${peak.toFixed(0)} MB (+${
      (peak - b0).toFixed(0)
    }), after the answers ${after.toFixed(0)} MB (+${(after - b0).toFixed(0)}) at ${
      ((performance.now() - t0) / 1000).toFixed(1)
    } s`,
  );
  for (const s of sockets) {
    try {
      s.close();
    } catch { /* closed */ }
  }
  await sleep(5000);
  const later = await rss();
  console.log(
    `(b) 5 s after: RSS ${later.toFixed(0)} MB (+${(later - b0).toFixed(0)}); ${await healthy()}`,
  );
  // The engine collects garbage as it allocates: after some ordinary traffic
  // the bodies' strings are gone (an idle process keeps them until then).
  for (let i = 0; i < 300; i++) await healthy();
  const traffic = await rss();
  console.log(
    `(b) after 300 more sessions and tool calls: RSS ${traffic.toFixed(0)} MB (+${
      (traffic - b0).toFixed(0)
    })`,
  );
}
child.kill("SIGTERM");
await child.status;
