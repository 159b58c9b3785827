/**
 * The KV session store cannot fill the disk or silently lose state, over real
 * HTTP against `cli serve --http --session-store kv:PATH` children, with the
 * KV file in a temp dir read by the test itself:
 *
 * - handshakes evicted from the session table (by the client's byte budget
 *   here, as by the count bound or their expiry) are deleted from KV at once,
 *   and what one client keeps in KV stays within its budget;
 * - assigns too large to store fail the call with a clear error, the session
 *   ends, and another instance does not restore its older state;
 * - a KV file removed or made read-only while serving is reported (a
 *   `kv.unavailable` line, readiness 503) and refused with the reason; a
 *   read-only one at start is a clear error at start.
 */

import assert from "node:assert/strict";
import { initializeRequest, post } from "../helpers/http_helpers.ts";

const ROOT = new URL("../..", import.meta.url);
const MiB = 1024 * 1024;

interface Child {
  url: string;
  origin: string;
  log: string[];
  /** Waits (at most 15 s) for a log line that matches. */
  logged(pattern: RegExp): Promise<string>;
  stop(): Promise<void>;
}

/** Starts `cli serve <module> --http --session-store kv:<path>` and reads its log. */
async function serve(module: string, kvPath: string, extra: string[] = []): Promise<Child> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "cli/main.ts",
      "serve",
      module,
      "--http",
      "--port",
      "0",
      "--session-store",
      `kv:${kvPath}`,
      "--log-format",
      "json",
      // What sessions retain in memory is bounded more tightly by default
      // (64 KiB each, strings counted at 2 bytes a character); loosened so the store's own budget is what is tested.
      "--max-session-bytes",
      "4194304",
      "--max-session-bytes-per-client",
      "1073741824",
      ...extra,
    ],
    cwd: ROOT,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const log: string[] = [];
  const { promise: started, resolve: listening } = Promise.withResolvers<string | undefined>();
  const reading = (async () => {
    let pending = "";
    for await (const chunk of child.stderr.pipeThrough(new TextDecoderStream())) {
      pending += chunk;
      let newline;
      while ((newline = pending.indexOf("\n")) !== -1) {
        const line = pending.slice(0, newline);
        pending = pending.slice(newline + 1);
        log.push(line);
        const url = line.match(/listening on (\S+?)"/)?.[1];
        if (url) listening(url);
      }
    }
    if (pending) log.push(pending);
    listening(undefined);
  })();
  // Bounded: a child that does not listen within 30 s is stopped.
  const slow = setTimeout(() => child.kill("SIGKILL"), 30_000);
  const url = await started;
  clearTimeout(slow);
  if (!url) {
    await child.status;
    await reading;
    throw new Error(`the server did not start: ${log.join("\n")}`);
  }
  return {
    url,
    origin: new URL(url).origin,
    log,
    async logged(pattern) {
      for (let i = 0; i < 300; i++) {
        const line = log.find((l) => pattern.test(l));
        if (line) return line;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      throw new Error(`no log line matches ${pattern}: ${log.join("\n")}`);
    },
    async stop() {
      try {
        child.kill("SIGTERM");
      } catch { /* exited already */ }
      await child.status;
      await reading;
    },
  };
}

/** The session records in the KV file: their count and bytes. */
async function stored(kvPath: string): Promise<{ records: number; bytes: number }> {
  const kv = await Deno.openKv(kvPath);
  try {
    let records = 0;
    let bytes = 0;
    for await (const entry of kv.list<Uint8Array>({ prefix: ["anubis", "sessions"] })) {
      if (entry.key.length === 3) records++;
      bytes += entry.value.byteLength;
    }
    return { records, bytes };
  } finally {
    kv.close();
  }
}

/** Polls `read` until `done` holds of its value (at most 10 s); the last value. */
async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  let value = await read();
  for (let i = 0; i < 100 && !done(value); i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    value = await read();
  }
  return value;
}

/** The readiness endpoint's answer. */
async function readiness(
  origin: string,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${origin}/ready`);
  return { status: response.status, body: await response.json() };
}

const bigCapabilities = (bytes: number) => ({ experimental: { pad: { data: "x".repeat(bytes) } } });

async function finish(url: string, session: string): Promise<void> {
  const done = await post(url, { jsonrpc: "2.0", method: "notifications/initialized" }, {
    "mcp-session-id": session,
  });
  assert.equal(done.status, 202);
  await done.body?.cancel();
}

async function open(url: string, capabilities = {}): Promise<string> {
  const response = await post(url, initializeRequest(1, "2025-11-25", capabilities));
  await response.body?.cancel();
  const session = response.headers.get("mcp-session-id");
  assert.equal(response.status, 200);
  await finish(url, session!);
  return session!;
}

function call(id: number, name: string, args: Record<string, unknown> = {}) {
  return { jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } };
}

Deno.test("kv session store: evicted handshakes leave KV at once, and one client stays within its budget", async () => {
  const dir = await Deno.makeTempDir();
  const kvPath = `${dir}/sessions.kv`;
  const server = await serve("examples/everything.ts", kvPath);
  try {
    const kept = await open(server.url);
    // 60 initializes of ~600 KB never finished: 36 MB sent, all answered.
    const statuses: number[] = [];
    for (let i = 0; i < 60; i++) {
      const response = await post(
        server.url,
        initializeRequest(i, "2025-11-25", bigCapabilities(600_000)),
      );
      statuses.push(response.status);
      await response.body?.cancel();
    }
    assert.deepEqual([...new Set(statuses)], [200]);
    // Each made room in the client's 16 MiB by evicting its oldest handshake,
    // whose record is deleted then, not 30 minutes later.
    const after = await until(() => stored(kvPath), (s) => s.records <= 28);
    assert.ok(after.records <= 28 && after.records >= 2, JSON.stringify(after));
    assert.ok(after.bytes <= 16 * MiB + 64 * 1024, JSON.stringify(after));
    // A finished session is never evicted to make room, and still answers.
    const answer = await post(server.url, call(2, "test_simple_text"), { "mcp-session-id": kept });
    assert.equal(answer.status, 200);
    assert.equal((await answer.json()).result?.content[0].type, "text");
    // Finished sessions cannot be evicted: past the budget the initialize is refused, clearly.
    let refused: Response | undefined;
    for (let i = 0; i < 40 && !refused; i++) {
      const response = await post(
        server.url,
        initializeRequest(100 + i, "2025-11-25", bigCapabilities(600_000)),
      );
      await response.body?.cancel();
      if (response.status !== 200) {
        refused = response;
        break;
      }
      await finish(server.url, response.headers.get("mcp-session-id")!);
    }
    assert.ok(refused, "the budget was never reached");
    assert.equal(refused.status, 429);
    assert.ok(Number(refused.headers.get("retry-after")) >= 1);
    const final = await stored(kvPath);
    assert.ok(final.bytes <= 16 * MiB + 64 * 1024, JSON.stringify(final));
    const body =
      await (await post(server.url, initializeRequest(7, "2025-11-25", bigCapabilities(600_000))))
        .json();
    assert.equal(body.id, 7);
    assert.equal(body.error.code, -32603);
    assert.match(body.error.message, /Session store budget exceeded/);
    // DELETE removes the record.
    const del = await fetch(server.url, { method: "DELETE", headers: { "mcp-session-id": kept } });
    assert.equal(del.status, 200);
    await del.body?.cancel();
    const kv = await Deno.openKv(kvPath);
    assert.equal((await kv.get(["anubis", "sessions", kept])).value, null);
    kv.close();
  } finally {
    await server.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("kv session store: assigns too large to store fail the call, and no instance restores the older state", async () => {
  const dir = await Deno.makeTempDir();
  const kvPath = `${dir}/sessions.kv`;
  const first = await serve("tests/helpers/assigns_server.ts", kvPath);
  const second = await serve("tests/helpers/assigns_server.ts", kvPath);
  try {
    const session = await open(first.url);
    const headers = { "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" };
    const small = await (await post(first.url, call(1, "remember", { size: 1000 }), headers))
      .json();
    assert.equal(small.result?.content[0].text, "remembered 1000");
    const elsewhere = await (await post(second.url, call(2, "recall"), headers)).json();
    assert.equal(elsewhere.result?.content[0].text, "holds 1000");
    // ~800 KB of assigns: more than a KV record may take.
    const big = await post(first.url, call(3, "remember", { size: 800_000 }), headers);
    assert.equal(big.status, 500);
    const refusal = await big.json();
    assert.equal(refusal.id, 3);
    assert.equal(refusal.error.code, -32603);
    assert.match(
      refusal.error.message,
      /could not be stored .*too large to store.*the session has ended/,
    );
    await first.logged(/"event":"store.failed".*"ended":true/);
    // The session ended: neither instance serves the state of before.
    for (const [server, id] of [[second, 4], [first, 5]] as const) {
      const after = await post(server.url, call(id, "recall"), headers);
      assert.equal(after.status, 404, await after.clone().text());
      assert.equal((await after.json()).id, id);
    }
  } finally {
    await first.stop();
    await second.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("kv session store: a KV file removed while serving is reported and refused, not split", async () => {
  const dir = await Deno.makeTempDir();
  const kvPath = `${dir}/sessions.kv`;
  const server = await serve("examples/everything.ts", kvPath);
  try {
    await open(server.url);
    assert.deepEqual(await readiness(server.origin), { status: 200, body: { ready: true } });
    await Deno.remove(kvPath);
    const line = await server.logged(/"event":"kv.unavailable"/);
    assert.match(line, /removed while serving/);
    const notReady = await until(() => readiness(server.origin), (r) => r.status === 503);
    assert.equal(notReady.status, 503);
    assert.match(String(notReady.body.problem), /removed while serving/);
    const refused = await post(server.url, initializeRequest(9));
    assert.equal(refused.status, 503);
    const body = await refused.json();
    assert.equal(body.id, 9);
    assert.match(body.error.message, /KV store unavailable: .*removed while serving/);
  } finally {
    await server.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("kv session store: a KV file read-only at start is an error at start; made read-only while serving, it is reported", async () => {
  const dir = await Deno.makeTempDir();
  const kvPath = `${dir}/sessions.kv`;
  try {
    (await Deno.openKv(kvPath)).close();
    await Deno.chmod(kvPath, 0o444);
    // Bounded: a serve that starts anyway is stopped after 20 s (and the test fails).
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
      cwd: ROOT,
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).spawn();
    const stop = setTimeout(() => child.kill("SIGKILL"), 20_000);
    const start = await child.output();
    clearTimeout(stop);
    assert.equal(start.signal, null, "serve started on a read-only KV file");
    assert.notEqual(start.code, 0);
    assert.match(
      new TextDecoder().decode(start.stderr),
      /cannot open the KV store: the KV file .* is read-only \(mode 444\)/,
    );

    await Deno.chmod(kvPath, 0o644);
    const server = await serve("examples/everything.ts", kvPath);
    try {
      await Deno.chmod(kvPath, 0o444);
      assert.match(await server.logged(/"event":"kv.unavailable"/), /read-only/);
      const notReady = await until(() => readiness(server.origin), (r) => r.status === 503);
      assert.equal(notReady.status, 503);
      assert.match(String(notReady.body.problem), /read-only/);
      const refused = await post(server.url, initializeRequest(4));
      assert.equal(refused.status, 503);
      assert.match((await refused.json()).error.message, /read-only/);
      await Deno.chmod(kvPath, 0o644);
      await server.logged(/"event":"kv.recovered"/);
      const back = await until(() => readiness(server.origin), (r) => r.status === 200);
      assert.equal(back.status, 200);
      await open(server.url);
    } finally {
      await server.stop();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("kv session store: --max-stored-session-bytes-per-client sets the client's budget", async () => {
  const dir = await Deno.makeTempDir();
  const kvPath = `${dir}/sessions.kv`;
  const server = await serve("examples/everything.ts", kvPath, [
    "--max-stored-session-bytes-per-client",
    "1500000",
  ]);
  try {
    // Two finished sessions of ~600 KB fit in 1.5 MB; the third does not.
    await open(server.url, bigCapabilities(600_000));
    await open(server.url, bigCapabilities(600_000));
    const refused = await post(
      server.url,
      initializeRequest(3, "2025-11-25", bigCapabilities(600_000)),
    );
    assert.equal(refused.status, 429);
    const body = await refused.json();
    assert.equal(body.id, 3);
    assert.match(body.error.message, /does not fit in this client's 1500000 bytes/);
  } finally {
    await server.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
