/**
 * End-to-end tests of `cli serve --http`: a real child process on a free
 * port, found from the one line it prints on stderr.
 */

import assert from "node:assert/strict";
import { startCli } from "../helpers/everything_http_server.ts";
import { headers2026, initialize, post, request2026, SseReader } from "../helpers/http_helpers.ts";

const ROOT = new URL("../..", import.meta.url);

/** Spawns the CLI on examples/hello.ts and waits for its "listening on" line. */
const spawn = (...flags: string[]) => startCli("examples/hello.ts", flags);

Deno.test("http cli: serve --http --port 0 prints its URL and serves both eras", async () => {
  const server = await spawn("--port", "0", "--event-store", "memory");
  try {
    const match = server.firstLine.match(
      /^anubis: listening on (http:\/\/127\.0\.0\.1:(\d+)\/mcp)$/,
    );
    assert.ok(match, server.firstLine);
    assert.notEqual(match[2], "0");
    const url = match[1];

    const sessionId = await initialize(url, "2025-11-25");
    const call = await post(url, {
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "echo", arguments: { text: "cli" } },
    }, { "mcp-session-id": sessionId });
    assert.deepEqual((await call.json()).result, {
      content: [{ type: "text", text: "echo: cli" }],
    });
    const stream = await fetch(url, {
      headers: { accept: "text/event-stream", "mcp-session-id": sessionId },
    });
    const reader = new SseReader(stream);
    assert.deepEqual(await reader.next(), { id: "0", retry: "3000", data: "" });
    await reader.cancel();

    const modern = await post(
      url,
      request2026(2, "tools/call", { name: "echo", arguments: { text: "2026" } }),
      headers2026("tools/call", "echo"),
    );
    assert.equal((await modern.json()).result.content[0].text, "echo: 2026");
  } finally {
    const { code } = await server.stop();
    assert.equal(code, 0);
  }
});

Deno.test("http cli: KV stores keep a session across a restart", async () => {
  const dir = await Deno.makeTempDir({ prefix: "anubis-http-cli-" });
  const flags = [
    "--port",
    "0",
    "--event-store",
    `kv:${dir}/a.kv`,
    "--session-store",
    `kv:${dir}/a.kv`,
  ];
  try {
    let sessionId: string;
    const first = await spawn(...flags);
    try {
      const url = first.firstLine.replace("anubis: listening on ", "");
      sessionId = await initialize(url, "2025-11-25");
    } finally {
      assert.equal((await first.stop()).code, 0);
    }
    const second = await spawn(...flags);
    try {
      const url = second.firstLine.replace("anubis: listening on ", "");
      const call = await post(url, {
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "echo", arguments: { text: "restored" } },
      }, { "mcp-session-id": sessionId, "mcp-protocol-version": "2025-11-25" });
      assert.equal(call.status, 200);
      assert.equal((await call.json()).result.content[0].text, "echo: restored");
      const stream = await fetch(url, {
        headers: { accept: "text/event-stream", "mcp-session-id": sessionId, "last-event-id": "0" },
      });
      const reader = new SseReader(stream);
      assert.deepEqual(await reader.next(), { id: "0", retry: "3000", data: "" });
      await reader.cancel();
    } finally {
      assert.equal((await second.stop()).code, 0);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("http cli: a store that cannot be opened is a one-line error", async () => {
  const output = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "cli/main.ts",
      "serve",
      "examples/hello.ts",
      "--http",
      "--port",
      "0",
      "--session-store",
      "kv:/proc/anubis-no-such-dir/a.kv",
    ],
    cwd: ROOT,
    stdout: "null",
    stderr: "piped",
  }).output();
  assert.equal(output.code, 1);
  const stderr = new TextDecoder().decode(output.stderr).trim();
  assert.equal(stderr.split("\n").length, 1, stderr);
  assert.match(stderr, /^anubis: cannot open the KV store: /);
});
