/**
 * End-to-end tests of `cli serve` on stdio: a real child process, real pipes,
 * raw newline-delimited JSON-RPC.
 */

import assert from "node:assert/strict";
import { spawnServe, start } from "../helpers/stdio_child.ts";

const ROOT = new URL("../..", import.meta.url);
const META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": { elicitation: {} },
  "io.modelcontextprotocol/clientInfo": { name: "raw", version: "0" },
};

const byId = (id: unknown) => (m: Record<string, unknown>) => m.id === id;

Deno.test("stdio: legacy handshake, lists, calls and the exact wire shapes", async () => {
  const server = start();
  await server.send(
    JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "raw", version: "0" },
      },
    }) + "\n",
  );
  const init = await server.next(byId(1));
  assert.deepEqual(init, {
    jsonrpc: "2.0",
    id: 1,
    result: {
      protocolVersion: "2025-11-25",
      capabilities: {
        logging: {},
        tools: { listChanged: true },
        prompts: { listChanged: true },
        resources: { subscribe: true, listChanged: true },
      },
      serverInfo: { name: "hello", version: "1.0.0" },
      instructions: "Say hello.",
    },
  });
  await server.send('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
  await server.send('{"jsonrpc":"2.0","id":2,"method":"ping"}\n');
  assert.deepEqual(await server.next(byId(2)), { jsonrpc: "2.0", id: 2, result: {} });
  await server.send(
    '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}\n',
  );
  assert.deepEqual(await server.next(byId(3)), {
    jsonrpc: "2.0",
    id: 3,
    result: { content: [{ type: "text", text: "echo: hi" }] },
  });
  // Invalid arguments are a tool error from 2025-11-25 on.
  await server.send(
    '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{}}}\n',
  );
  const invalid = await server.next(byId(4));
  assert.equal((invalid.result as { isError: boolean }).isError, true);
  await server.send(
    '{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"test://items/7"}}\n',
  );
  assert.deepEqual(await server.next(byId(5)), {
    jsonrpc: "2.0",
    id: 5,
    result: { contents: [{ uri: "test://items/7", text: "item 7" }] },
  });
  await server.send(
    '{"jsonrpc":"2.0","id":6,"method":"resources/read","params":{"uri":"test://nope"}}\n',
  );
  assert.deepEqual(await server.next(byId(6)), {
    jsonrpc: "2.0",
    id: 6,
    error: {
      code: -32002,
      message: "Resource not found: test://nope",
      data: { uri: "test://nope" },
    },
  });
  await server.send('{"jsonrpc":"2.0","id":7,"method":"nope/nope"}\n');
  assert.equal(((await server.next(byId(7))).error as { code: number }).code, -32601);
  const { code } = await server.close();
  assert.equal(code, 0);
});

Deno.test("stdio: stateless requests with discover, cache fields and multi round-trip input", async () => {
  const server = start();
  await server.send(
    JSON.stringify({
      jsonrpc: "2.0",
      id: "d",
      method: "server/discover",
      params: { _meta: META },
    }) + "\n",
  );
  const discover = (await server.next(byId("d"))).result as Record<string, unknown>;
  assert.deepEqual(discover.supportedVersions, [
    "2026-07-28",
    "2025-11-25",
    "2025-06-18",
    "2025-03-26",
  ]);
  assert.equal(discover.resultType, "complete");
  assert.equal(discover.ttlMs, 0);
  assert.equal(discover.cacheScope, "private");
  assert.deepEqual(
    (discover._meta as Record<string, unknown>)["io.modelcontextprotocol/serverInfo"],
    {
      name: "hello",
      version: "1.0.0",
    },
  );
  const call = (id: string, extra: Record<string, unknown> = {}) =>
    server.send(
      JSON.stringify({
        jsonrpc: "2.0",
        id,
        method: "tools/call",
        params: { name: "ask_name", arguments: {}, _meta: META, ...extra },
      }) + "\n",
    );
  await call("r1");
  const round1 = (await server.next(byId("r1"))).result as Record<string, unknown>;
  assert.equal(round1.resultType, "input_required");
  assert.deepEqual(Object.keys(round1.inputRequests as object), ["user_name"]);
  assert.equal(typeof round1.requestState, "string");
  await call("r2", {
    inputResponses: { user_name: { action: "accept", content: { name: "Alice" } } },
    requestState: round1.requestState,
  });
  const round2 = (await server.next(byId("r2"))).result as Record<string, unknown>;
  assert.deepEqual(round2.content, [{ type: "text", text: "Hello, Alice!" }]);
  await call("r3", { requestState: `${round1.requestState}-TAMPERED` });
  assert.equal(((await server.next(byId("r3"))).error as { code: number }).code, -32602);
  await server.send(
    JSON.stringify({
      jsonrpc: "2.0",
      id: "v",
      method: "tools/list",
      params: { _meta: { ...META, "io.modelcontextprotocol/protocolVersion": "1999-01-01" } },
    }) + "\n",
  );
  const unsupported = (await server.next(byId("v"))).error as Record<string, unknown>;
  assert.equal(unsupported.code, -32022);
  assert.deepEqual((unsupported.data as Record<string, unknown>).requested, "1999-01-01");
  const { code } = await server.close();
  assert.equal(code, 0);
});

Deno.test("stdio: bad input is answered and the server keeps serving", async () => {
  const server = start();
  // Blank lines (empty, spaces, a lone CR) are skipped without an answer; a
  // line that is not UTF-8 or not JSON is a parse error; JSON that is not
  // JSON-RPC is an invalid request. Exactly one answer per bad line, in order.
  await server.send("{not json\n\n   \n\r\n");
  await server.send(new Uint8Array([0xff, 0xfe, 0x0a, 0x0a]));
  await server.send(
    '\t\n{"jsonrpc":"2.0","id":9,"method":7}\n\n{"jsonrpc":"2.0","id":"s","method":"ping"}\n',
  );
  await server.next(byId("s"));
  const parseError = '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}';
  assert.deepEqual(server.lines, [
    parseError,
    parseError,
    '{"jsonrpc":"2.0","id":9,"error":{"code":-32600,"message":"Invalid Request: method must be a string"}}',
    '{"jsonrpc":"2.0","id":"s","result":{}}',
  ]);
  // Partial lines across writes, and two messages in one chunk.
  await server.send('{"jsonrpc":"2.0","id":10,');
  await server.send('"method":"ping"}\n{"jsonrpc":"2.0","id":11,"method":"ping"}\n');
  // Before initialize only ping is served.
  assert.deepEqual(await server.next(byId(10)), { jsonrpc: "2.0", id: 10, result: {} });
  assert.deepEqual(await server.next(byId(11)), { jsonrpc: "2.0", id: 11, result: {} });
  await server.send('{"jsonrpc":"2.0","id":12,"method":"tools/list"}\n');
  assert.equal(((await server.next(byId(12))).error as { code: number }).code, -32600);
  // A multi-megabyte line.
  const big = "x".repeat(3 * 1024 * 1024);
  await server.send(
    JSON.stringify({ jsonrpc: "2.0", id: 13, method: "ping", params: { big } }) + "\n",
  );
  assert.deepEqual(await server.next(byId(13)), { jsonrpc: "2.0", id: 13, result: {} });
  const { code, stderr } = await server.close();
  assert.equal(code, 0, stderr);
});

Deno.test("stdio: a line that starts with a byte order mark is a parse error, as on HTTP", async () => {
  const server = start();
  // First in the stream (where a stream decoder would drop it), then mid-stream,
  // whole in one chunk and split across two.
  await server.send('\ufeff{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
  await server.send('\ufeff{"jsonrpc":"2.0","id":2,"method":"ping"}\n{"jsonrpc":"2.0",');
  await server.send('"id":3,"method":"ping"}\n\ufeff{"jsonrpc":');
  await server.send('"2.0","id":4,"method":"ping"}\n{"jsonrpc":"2.0","id":5,"method":"ping"}\n');
  await server.next(byId(5));
  const parseError = '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}';
  // Parse errors are answered at once, requests once served: compare as a set.
  assert.deepEqual(
    [...server.lines].sort(),
    [
      parseError,
      parseError,
      parseError,
      '{"jsonrpc":"2.0","id":3,"result":{}}',
      '{"jsonrpc":"2.0","id":5,"result":{}}',
    ].sort(),
  );
  const { code, stderr } = await server.close();
  assert.equal(code, 0, stderr);
});

Deno.test("cli: a missing module and a bad flag give one line on stderr and a non-zero exit", async () => {
  for (
    const args of [["serve", "tests/fixtures/missing.ts"], ["serve", "x.ts", "--frobnicate"], [
      "serve",
    ]]
  ) {
    const output = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "cli/main.ts", ...args],
      cwd: ROOT,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.notEqual(output.code, 0, args.join(" "));
    const stderr = new TextDecoder().decode(output.stderr).trim();
    assert.equal(stderr.split("\n").length, 1, stderr);
    assert.match(stderr, /^anubis: /);
    assert.equal(output.stdout.length, 0);
  }
});

Deno.test("stdio: SIGTERM and SIGINT shut down like end of input, exit code 0", async () => {
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    const child = spawnServe("examples/hello.ts", { stderr: "null" });
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode('{"jsonrpc":"2.0","id":1,"method":"ping"}\n'));
    const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    assert.equal((await reader.read()).value, '{"jsonrpc":"2.0","id":1,"result":{}}\n');
    child.kill(signal);
    const status = await child.status;
    assert.equal(status.code, 0, signal);
    await reader.cancel();
    await writer.close().catch(() => {});
  }
});
