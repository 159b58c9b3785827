/**
 * `cli serve --http` under descriptor exhaustion and with a truncated KV
 * file: real child processes on loopback, a real `ulimit`, real sockets.
 */

import assert from "node:assert/strict";
import { headers2026, post, request2026 } from "../helpers/http_helpers.ts";

const ROOT = new URL("../..", import.meta.url);

/** Spawns `cli serve --http` under `sh -c` (for `ulimit`) and waits for its URL. */
function spawn(prefix: string, ...flags: string[]) {
  return spawnModule("examples/hello.ts", prefix, ...flags);
}

/** Spawns `cli serve <module> --http` under `sh -c` (for `ulimit`) and waits for its URL. */
async function spawnModule(module: string, prefix: string, ...flags: string[]) {
  const command = `${prefix} exec "$0" run -A cli/main.ts serve ${module} --http ` +
    `--port 0 ${flags.join(" ")}`;
  const child = new Deno.Command("sh", {
    args: ["-c", command, Deno.execPath()],
    cwd: ROOT,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const reader = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let stderr = "";
  let url: string | undefined;
  while (url === undefined) {
    const { value, done } = await reader.read();
    if (done) break;
    stderr += value;
    url = stderr.match(/listening on (http:\/\/\S+)/)?.[1];
  }
  const rest = (async () => {
    for (let r = await reader.read(); !r.done; r = await reader.read()) stderr += r.value;
  })();
  assert.ok(url, stderr);
  return {
    url,
    pid: child.pid,
    stderr: () => stderr,
    status: child.status,
    async stop() {
      child.kill("SIGTERM");
      const status = await child.status;
      await rest;
      return status.code;
    },
  };
}

async function echo(url: string, text: string): Promise<string> {
  const response = await post(
    url,
    request2026(1, "tools/call", { name: "echo", arguments: { text } }),
    headers2026("tools/call", "echo"),
  );
  return (await response.json()).result.content[0].text;
}

Deno.test("http cli: running out of file descriptors does not stop the server; it serves again once sockets free", async () => {
  const server = await spawn("ulimit -n 256;");
  const port = Number(new URL(server.url).port);
  const sockets: Deno.Conn[] = [];
  try {
    assert.equal(await echo(server.url, "before"), "echo: before");
    // Idle connections until the server reports exhaustion (bounded: 400 sockets, 20 s).
    const deadline = Date.now() + 20_000;
    while (!server.stderr().includes("os error 24") && Date.now() < deadline) {
      // Refused while the server is between listeners.
      const socket = sockets.length < 400
        ? await Deno.connect({ hostname: "127.0.0.1", port }).catch(() => undefined)
        : undefined;
      if (socket) sockets.push(socket);
      else await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.match(server.stderr(), /Too many open files \(os error 24\).*accepting again/);
    for (const socket of sockets.splice(0)) socket.close();
    // It accepts again within its back-off (at most 1 s between tries); bounded at 10 s.
    let answer: string | undefined;
    for (let i = 0; i < 100 && answer === undefined; i++) {
      answer = await echo(server.url, "after").catch(() => undefined);
      if (answer === undefined) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.equal(answer, "echo: after");
  } finally {
    for (const socket of sockets) socket.close();
    assert.equal(await server.stop(), 0);
  }
});

Deno.test("http cli: with short connection timeouts, idle sockets past the descriptor limit are shed and the server serves again", async () => {
  const server = await spawn(
    "ulimit -n 256;",
    "--header-timeout",
    "1000",
    "--idle-timeout",
    "1000",
  );
  const port = Number(new URL(server.url).port);
  const sockets: Deno.Conn[] = [];
  try {
    assert.equal(await echo(server.url, "before"), "echo: before");
    // More idle sockets than the server has descriptors; none is ever closed by this side.
    for (let i = 0; i < 320; i++) {
      const socket = await Deno.connect({ hostname: "127.0.0.1", port }).catch(() => undefined);
      if (socket) sockets.push(socket);
    }
    // The server runs out of descriptors, sheds the sockets idle longest and those past the
    // header timeout, and accepts again.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    let answer: string | undefined;
    for (let i = 0; i < 200 && answer === undefined; i++) {
      answer = await echo(server.url, "after").catch(() => undefined);
      if (answer === undefined) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.equal(answer, "echo: after", server.stderr());
  } finally {
    for (const socket of sockets) socket.close();
    assert.equal(await server.stop(), 0);
  }
  // Said once, when it noticed (the whole of stderr is read once the server stopped).
  const said = server.stderr().match(/Too many open files \(os error 24\).*accepting again/g);
  assert.equal(said?.length, 1, server.stderr());
});

/** The inode of the socket listening on `port` on 127.0.0.1 (from `/proc/net/tcp`). */
async function listeningInode(port: number): Promise<string | undefined> {
  const local = `0100007F:${port.toString(16).toUpperCase().padStart(4, "0")}`;
  for (const line of (await Deno.readTextFile("/proc/net/tcp")).split("\n").slice(1)) {
    const fields = line.trim().split(/\s+/);
    if (fields[1] === local && fields[3] === "0A") return fields[9];
  }
  return undefined;
}

/** One POST on a connection of its own (never a pooled one), bounded: the status line, or the failure. */
async function rawCall(port: number, boundMs: number): Promise<string> {
  const body = JSON.stringify(
    request2026(1, "tools/call", { name: "test_simple_text", arguments: {} }),
  );
  const head = Object.entries({
    host: `127.0.0.1:${port}`,
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    ...headers2026("tools/call", "test_simple_text"),
    connection: "close",
    "content-length": String(new TextEncoder().encode(body).length),
  }).map(([name, value]) => `${name}: ${value}\r\n`).join("");
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const bound = setTimeout(() => conn.close(), boundMs);
  let answer = "";
  try {
    await conn.write(new TextEncoder().encode(`POST /mcp HTTP/1.1\r\n${head}\r\n${body}`));
    const buffer = new Uint8Array(16 * 1024);
    for (let n = await conn.read(buffer); n !== null; n = await conn.read(buffer)) {
      answer += new TextDecoder().decode(buffer.subarray(0, n));
    }
    conn.close();
  } catch (error) {
    return `failed: ${error}; read: ${answer}`;
  } finally {
    clearTimeout(bound);
  }
  return answer;
}

Deno.test("http cli: with no flag under ulimit -n 256, 300 idle sockets do not keep a new client out; one true report, the listener never re-opened", async () => {
  const server = await spawnModule("examples/everything.ts", "ulimit -n 256;");
  const port = Number(new URL(server.url).port);
  const sockets: Deno.Conn[] = [];
  try {
    const inode = await listeningInode(port);
    assert.ok(inode, "no listening socket found");
    assert.match(await rawCall(port, 10_000), /^HTTP\/1\.1 200 /);
    assert.doesNotMatch(server.stderr(), /os error|Too many open files/);
    // 300 connections that never send a byte, more than the server has descriptors for.
    for (let i = 0; i < 300; i++) {
      const socket = await Deno.connect({ hostname: "127.0.0.1", port }).catch(() => undefined);
      if (socket) sockets.push(socket);
    }
    assert.equal(sockets.length, 300);
    // A new client on a connection of its own is served while they are all held: bounded
    // at 45 s (the figure), retried if its connection was refused or reset.
    const started = Date.now();
    let answer = "";
    while (!answer.startsWith("HTTP/1.1 200 ") && Date.now() - started < 45_000) {
      answer = await rawCall(port, 45_000 - (Date.now() - started));
    }
    const servedAfter = Date.now() - started;
    assert.match(answer, /^HTTP\/1\.1 200 /, server.stderr());
    assert.match(answer, /"result"/);
    console.log(`a new client was served ${servedAfter} ms after 300 idle sockets were open`);
    // The same listening socket throughout: never closed and opened again.
    assert.equal(await listeningInode(port), inode);
  } finally {
    for (const socket of sockets) socket.close();
    assert.equal(await server.stop(), 0);
  }
  // At most one report of the server's, and a true one (accepting did fail for lack of
  // descriptors; Deno may add a warning of its own about a file it could not open then).
  const said = server.stderr().match(/Too many open files \(os error 24\): new connections/g);
  assert.ok((said?.length ?? 0) <= 1, server.stderr());
  assert.doesNotMatch(server.stderr(), /listening again/);
  assert.equal(server.stderr().match(/listening on/g)?.length, 1);
});

Deno.test("http cli: a KV file found empty is served with a warning on stderr", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/anubis.kv`;
  await Deno.writeFile(path, new Uint8Array());
  const server = await spawn("", "--session-store", `kv:${path}`);
  try {
    assert.match(server.stderr(), /warning: the KV file .*anubis\.kv is empty \(0 bytes\)/);
    assert.equal(await echo(server.url, "kv"), "echo: kv");
  } finally {
    assert.equal(await server.stop(), 0);
    await Deno.remove(dir, { recursive: true });
  }
});
