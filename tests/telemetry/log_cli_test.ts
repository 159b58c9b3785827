/**
 * The operator's log of `cli serve`: `--log-format json` writes one JSON
 * object a line on stderr (never stdout, which is the protocol's on stdio),
 * with the events an operator needs, each once, and no tool arguments.
 */

import assert from "node:assert/strict";
import { startCli } from "../helpers/everything_http_server.ts";
import {
  headers2026,
  initialize,
  initializeRequest,
  post,
  request2026,
} from "../helpers/http_helpers.ts";

const ROOT = new URL("../..", import.meta.url);
const SECRET = "tool-argument-that-must-not-be-logged";

/** The JSON lines of a stderr, each parsed (a line that is not JSON fails the test). */
const records = (stderr: string) =>
  stderr.split("\n").filter((line) => line.trim()).map((line) => {
    try {
      return JSON.parse(line) as Record<string, unknown>;
    } catch {
      throw new Error(`not a JSON line: ${line}`);
    }
  });

Deno.test("log: --log-format json over HTTP, the operator's events each once", async () => {
  const server = await startCli("examples/hello.ts", [
    "--port",
    "0",
    "--log-format",
    "json",
    "--log-level",
    "info",
  ]);
  let sessionId: string;
  try {
    const url = server.url.href;
    sessionId = await initialize(url, "2025-11-25");
    const call = await post(url, {
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "echo", arguments: { text: SECRET } },
    }, { "mcp-session-id": sessionId });
    assert.equal(call.status, 200);
    await call.body?.cancel();
    const modern = await post(
      url,
      request2026(2, "tools/call", { name: "echo", arguments: { text: SECRET } }),
      headers2026("tools/call", "echo"),
    );
    await modern.body?.cancel();
    const refused = await post(url, { jsonrpc: "2.0", id: 3, method: "ping" }, {
      origin: "http://evil.example.com",
    });
    assert.equal(refused.status, 403);
    await refused.body?.cancel();
    const deleted = await fetch(url, {
      method: "DELETE",
      headers: { "mcp-session-id": sessionId, "mcp-protocol-version": "2025-11-25" },
    });
    assert.equal(deleted.status, 200);
    await deleted.body?.cancel();
  } catch (error) {
    await server.stop();
    throw error;
  }
  {
    const { code, stderr } = await server.stop();
    assert.equal(code, 0, stderr);
    assert.ok(!stderr.includes(SECRET), "no tool argument in the log");
    const logged = records(stderr);
    const events = logged.map((r) => r.event);
    assert.deepEqual(events, [
      "listening",
      "session.opened",
      "request.refused",
      "session.closed",
    ], stderr);
    for (const record of logged) {
      assert.equal(typeof record.time, "string");
      assert.equal(record.level, "info");
      assert.equal(typeof record.msg, "string");
    }
    const [listening, opened, refusal, closed] = logged;
    assert.equal(listening.url, server.url.href);
    assert.equal(opened.sessionId, sessionId!);
    assert.equal(opened.protocolVersion, "2025-11-25");
    assert.equal(refusal.status, 403);
    assert.match(String(refusal.reason), /Origin/i);
    assert.equal(closed.sessionId, sessionId!);
    assert.equal(closed.reason, "deleted");
  }
});

/** Serves hello.ts on stdio with `flags` for one initialize and one tool call, to the end of input. */
async function serveStdio(flags: string[]) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "cli/main.ts", "serve", "examples/hello.ts", ...flags],
    cwd: ROOT,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const input = [
    initializeRequest(0),
    { jsonrpc: "2.0", method: "notifications/initialized" },
    {
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "echo", arguments: { text: SECRET } },
    },
  ].map((m) => JSON.stringify(m) + "\n").join("");
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(input));
  await writer.close();
  const out = await child.output();
  const stdout = new TextDecoder().decode(out.stdout);
  return {
    code: out.code,
    stderr: new TextDecoder().decode(out.stderr),
    answers: stdout.trim().split("\n").map((line) => JSON.parse(line)),
  };
}

Deno.test("log: over stdio the log is JSON lines on stderr, stdout only the protocol", async () => {
  const { code, stderr, answers } = await serveStdio(["--log-format=json"]);
  assert.equal(code, 0, stderr);
  assert.deepEqual(answers.map((a) => a.id).sort(), [0, 1]);
  assert.ok(!stderr.includes(SECRET), "no tool argument in the log");
  const logged = records(stderr);
  assert.deepEqual(logged.map((r) => r.event), ["listening", "session.opened", "session.closed"]);
  assert.equal(logged[0].transport, "stdio");
  assert.equal(logged[1].protocolVersion, "2025-11-25");
  assert.equal(logged[2].reason, "end of input");
});

Deno.test("log: --log-level warn keeps the normal events out; a bad level is a usage error", async () => {
  const quiet = await serveStdio(["--log-level", "warn"]);
  assert.equal(quiet.code, 0, quiet.stderr);
  assert.deepEqual(quiet.answers.map((a) => a.id).sort(), [0, 1]);
  assert.equal(quiet.stderr, "");
  const bad = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "cli/main.ts", "serve", "examples/hello.ts", "--log-level", "loud"],
    cwd: ROOT,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).output();
  assert.equal(bad.code, 2);
  assert.match(new TextDecoder().decode(bad.stderr), /--log-level must be debug, info, warn/);
});
