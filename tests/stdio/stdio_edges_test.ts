/**
 * End-to-end stdio edge cases over a real `cli serve` child process: results
 * JSON cannot encode, console output from the user's module, work in flight
 * at end of input or on SIGTERM, and server-to-client requests that time out
 * or are abandoned.
 */

import assert from "node:assert/strict";
import { handshake, start, type StdioChild } from "../helpers/stdio_child.ts";

const EDGES = "tests/helpers/stdio_edge_server.ts";
const byId = (id: unknown) => (m: Record<string, unknown>) => m.id === id;
const byMethod = (method: string) => (m: Record<string, unknown>) => m.method === method;

function line(message: Record<string, unknown>): string {
  return JSON.stringify({ jsonrpc: "2.0", ...message }) + "\n";
}

function call(id: number, name: string): string {
  return line({ id, method: "tools/call", params: { name, arguments: {} } });
}

/** A 2025-11-25 session whose client declares sampling and elicitation. */
const open = (server: StdioChild) =>
  handshake(server, "2025-11-25", { sampling: {}, elicitation: {} });

const textOf = (m: Record<string, unknown>) =>
  (m.result as { content: { text: string }[] }).content[0].text;

Deno.test("stdio: a result JSON cannot encode is a -32603 error for its id; the server keeps serving", async () => {
  const server = start(EDGES);
  await open(server);
  await server.send(line({ id: 1, method: "logging/setLevel", params: { level: "debug" } }));
  await server.next(byId(1));
  await server.send(call(2, "bigint") + call(3, "circular") + call(4, "log_bigint"));
  for (const id of [2, 3]) {
    const answer = await server.next(byId(id));
    assert.deepEqual(Object.keys(answer), ["jsonrpc", "id", "error"]);
    const error = answer.error as { code: number; message: string };
    assert.equal(error.code, -32603);
    assert.match(error.message, /could not be encoded as JSON/);
  }
  // The log notification cannot be encoded: it is dropped, the call answers.
  assert.equal(textOf(await server.next(byId(4))), "logged");
  await server.send(line({ id: 5, method: "ping" }));
  assert.deepEqual(await server.next(byId(5)), { jsonrpc: "2.0", id: 5, result: {} });
  const { code, stderr } = await server.close();
  assert.equal(code, 0, stderr);
  assert.ok(
    !server.lines.some((l) => l.includes("notifications/message")),
    server.lines.join("\n"),
  );
  assert.match(stderr, /dropped .*notifications\/message.*BigInt/);
});

Deno.test("stdio: console output of the served module, at top level and in handlers, goes to stderr", async () => {
  const server = start(EDGES);
  await open(server);
  await server.send(call(1, "noisy"));
  assert.equal(textOf(await server.next(byId(1))), "printed");
  const { code, stderr } = await server.close();
  assert.equal(code, 0, stderr);
  for (const text of server.lines) {
    assert.equal(JSON.parse(text).jsonrpc, "2.0", `not a JSON-RPC message on stdout: ${text}`);
  }
  assert.deepEqual(server.lines.length, 2);
  for (
    const printed of [
      "top-level log",
      "top-level info",
      "log",
      "info",
      "debug",
      "{ dir: 1 }",
      "{ dirxml: 1 }",
      "table",
      "count: 1",
      "group",
      "groupCollapsed",
      "timeLog",
      "time: ",
      "trace",
      "assert",
    ]
  ) assert.ok(stderr.includes(printed), `${printed} missing from stderr:\n${stderr}`);
});

/** Calls `slow` and waits for its progress notification: the work is in flight. */
async function startSlow(server: StdioChild): Promise<void> {
  await server.send(
    line({ id: 1, method: "tools/call", params: { name: "slow", _meta: { progressToken: "p" } } }),
  );
  await server.next(byMethod("notifications/progress"));
}

Deno.test("stdio: at end of input, work in flight still answers before exit 0", async () => {
  const server = start(EDGES);
  await open(server);
  await startSlow(server);
  const { code, stderr } = await server.close();
  assert.equal(code, 0, stderr);
  assert.equal(server.lines.length, 3, server.lines.join("\n"));
  assert.equal(textOf(JSON.parse(server.lines[2])), "slow done");
});

Deno.test("stdio: on SIGTERM, work in flight still answers before exit 0", async () => {
  const server = start(EDGES);
  await open(server);
  await startSlow(server);
  server.kill("SIGTERM");
  assert.equal(textOf(await server.next(byId(1), 5_000)), "slow done");
  const { code, stderr } = await server.close();
  assert.equal(code, 0, stderr);
});

Deno.test("stdio: a server-to-client request the client never answers times out and is cancelled", async () => {
  const server = start(EDGES);
  await open(server);
  const started = Date.now();
  await server.send(call(1, "sample"));
  const asked = await server.next(byMethod("sampling/createMessage"));
  assert.equal(typeof asked.id, "string");
  const cancelled = await server.next(byMethod("notifications/cancelled"));
  assert.deepEqual(cancelled, {
    jsonrpc: "2.0",
    method: "notifications/cancelled",
    params: { requestId: asked.id, reason: "timeout" },
  });
  assert.equal(
    textOf(await server.next(byId(1))),
    "caught: sampling/createMessage got no answer within 300 ms",
  );
  assert.ok(Date.now() - started >= 300);
  // A late answer to the abandoned request is ignored; the server keeps serving.
  await server.send(line({ id: asked.id as string, result: { role: "assistant" } }));
  await server.send(line({ id: 2, method: "ping" }));
  assert.deepEqual(await server.next(byId(2)), { jsonrpc: "2.0", id: 2, result: {} });
  const { code, stderr } = await server.close();
  assert.equal(code, 0, stderr);
});

Deno.test("stdio: cancelling a request that waits for the client cancels the server's request too", async () => {
  const server = start(EDGES);
  await open(server);
  await server.send(call(1, "elicit"));
  const asked = await server.next(byMethod("elicitation/create"));
  await server.send(line({ method: "notifications/cancelled", params: { requestId: 1 } }));
  assert.deepEqual(await server.next(byMethod("notifications/cancelled")), {
    jsonrpc: "2.0",
    method: "notifications/cancelled",
    params: { requestId: asked.id, reason: "The request that asked was cancelled" },
  });
  await server.send(line({ id: 2, method: "ping" }));
  assert.deepEqual(await server.next(byId(2)), { jsonrpc: "2.0", id: 2, result: {} });
  const { code, stderr } = await server.close();
  assert.equal(code, 0, stderr);
  // A cancelled request gets no response.
  assert.ok(!server.lines.some((l) => JSON.parse(l).id === 1), server.lines.join("\n"));
});

Deno.test("stdio: answers of every size and script leave whole, through the reused output buffer and past it", async () => {
  const server = start(EDGES);
  await open(server);
  let id = 10;
  // Each round is sent at once, and its answers checked before the next: the
  // transport encodes a write of up to 64 Ki UTF-16 units into one reused
  // buffer, and a longer one, or one whose UTF-8 does not fit, into its own.
  const rounds: [string, number][][] = [
    [["a", 3], ["é", 10], ["€", 1], ["😀", 7]], // fits
    [["ü", 33 * 1024]], // fewer units than the buffer's bytes, more bytes
    [["😀", 16 * 1024 - 30]], // surrogate pairs across the buffer's end
    [["b", 200 * 1024], ["c", 2], ["ü", 5]], // longer than the buffer
    [["a", 3], ["é", 10], ["€", 1], ["😀", 7]], // fits again: nothing left of the others
  ];
  for (const round of rounds) {
    const first = id;
    await server.send(
      round.map(([text, times]) =>
        line({
          id: id++,
          method: "tools/call",
          params: { name: "repeat", arguments: { text, times } },
        })
      ).join(""),
    );
    for (const [i, [text, times]] of round.entries()) {
      const answer = textOf(await server.next(byId(first + i)));
      assert.equal(answer.length, text.length * times, `answer ${first + i}`);
      assert.equal(answer, text.repeat(times), `answer ${first + i}`);
    }
  }
  const { code, stderr } = await server.close();
  assert.equal(code, 0, stderr);
});

Deno.test("stdio: a tool needing scopes is hidden and its call is a JSON-RPC error naming them (no HTTP, no challenge)", async () => {
  const server = start("tests/helpers/scoped_server.ts");
  try {
    await handshake(server, "2025-11-25");
    await server.send('{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n');
    const list = await server.next((m) => m.id === 1);
    const tools = (list.result as { tools: { name: string }[] }).tools.map((t) => t.name);
    assert.deepEqual(tools, ["whoami"]);
    await server.send(
      '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"purge"}}\n',
    );
    const refused = await server.next((m) => m.id === 2);
    assert.deepEqual(refused.error, {
      code: -32600,
      message: "Forbidden: tool purge needs scope mcp:admin",
      data: { name: "purge", scopes: ["mcp:admin"] },
    });
  } finally {
    await server.close();
  }
});
