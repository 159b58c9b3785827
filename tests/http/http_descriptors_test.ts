/**
 * `cli serve --http` under descriptor exhaustion and with a truncated KV
 * file: real child processes on loopback, a real `ulimit`, real sockets.
 */

import assert from "node:assert/strict";
import { headers2026, post, request2026 } from "../helpers/http_helpers.ts";

const ROOT = new URL("../..", import.meta.url);

/** Spawns `cli serve --http` under `sh -c` (for `ulimit`) and waits for its URL. */
async function spawn(prefix: string, ...flags: string[]) {
  const command = `${prefix} exec "$0" run -A cli/main.ts serve examples/hello.ts --http ` +
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
    assert.match(server.stderr(), /Too many open files \(os error 24\).*listening again/);
    for (const socket of sockets.splice(0)) socket.close();
    // It listens again within its back-off (at most 1 s between tries); bounded at 10 s.
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

Deno.test("http cli: with connection timeouts (node:http), idle sockets past the descriptor limit are shed and the server serves again", async () => {
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
    // The server runs out of descriptors, sheds the sockets (header timeout), notices that
    // accepting stopped and listens again.
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
  const said = server.stderr().match(/Too many open files \(os error 24\).*listening again/g);
  assert.equal(said?.length, 1, server.stderr());
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
