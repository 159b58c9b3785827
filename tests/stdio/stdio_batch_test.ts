/**
 * JSON-RPC batches on stdio over a real `cli serve` child process: one array
 * holds every response of a 2025-03-26 batch (JSON-RPC 2.0 §6), and batches
 * are refused as a whole where the HTTP transport refuses them.
 */

import assert from "node:assert/strict";
import { handshake, start, type StdioChild } from "../helpers/stdio_child.ts";

const PING = '{"jsonrpc":"2.0","id":"p","method":"ping"}';
const NOTE = '{"jsonrpc":"2.0","method":"notifications/initialized"}';

async function session(version: string): Promise<StdioChild> {
  const server = start();
  await handshake(server, version);
  return server;
}

/**
 * Sends each batch, then a ping, and returns the `expected` lines answered
 * besides the ping's answer (a batch may answer after the ping).
 */
async function answers(
  server: StdioChild,
  batches: string[],
  expected: number,
): Promise<unknown[]> {
  const before = server.lines.length;
  await server.send(
    batches.map((b) => `${b}\n`).join("") + '{"jsonrpc":"2.0","id":"end","method":"ping"}\n',
  );
  await server.lineCount(before + expected + 1);
  await server.next((m) => m.id === "end");
  return server.lines.slice(before).map((l) => JSON.parse(l)).filter((m) => m.id !== "end");
}

const invalidRequest = (message: string) => ({
  jsonrpc: "2.0",
  id: null,
  error: { code: -32600, message },
});

Deno.test("stdio batch at 2025-03-26: every response in one array, none for notifications", async () => {
  const server = await session("2025-03-26");
  // Each batch on its own, so that the answers' order is known.
  const replies = [];
  for (
    const [batch, expected] of [
      [`[${PING},1,${NOTE},{"jsonrpc":"2.0","id":"m","method":"nope/nope"}]`, 1],
      ["[1,2]", 1],
      [`[${NOTE},${NOTE}]`, 0],
      ["[]", 1],
    ] as const
  ) replies.push(...await answers(server, [batch], expected));
  assert.equal(replies.length, 3, JSON.stringify(replies));
  const [mixed, invalid, empty] = replies as Record<string, unknown>[][];
  assert.ok(Array.isArray(mixed));
  assert.equal(mixed.length, 3);
  const byId = new Map(mixed.map((m) => [m.id, m]));
  assert.deepEqual(byId.get("p"), { jsonrpc: "2.0", id: "p", result: {} });
  assert.equal((byId.get("m")!.error as { code: number }).code, -32601);
  assert.deepEqual(byId.get(null), invalidRequest("Invalid Request: not a JSON object"));
  assert.deepEqual(invalid, [
    invalidRequest("Invalid Request: not a JSON object"),
    invalidRequest("Invalid Request: not a JSON object"),
  ]);
  // The notifications-only batch got nothing; the empty batch one error, not an array.
  assert.deepEqual(empty, invalidRequest("Empty batch"));
  const { code, stderr } = await server.close();
  assert.equal(code, 0, stderr);
});

Deno.test("stdio batch: refused as a whole after 2025-03-26, with initialize, or with a stateless request", async () => {
  const modern = await session("2025-06-18");
  assert.deepEqual(await answers(modern, [`[${PING},1]`], 1), [
    invalidRequest("JSON-RPC batches are not supported by protocol 2025-06-18"),
  ]);
  assert.equal((await modern.close()).code, 0);

  const old = await session("2025-03-26");
  const stateless = JSON.stringify({
    jsonrpc: "2.0",
    id: "s",
    method: "tools/list",
    params: {
      _meta: {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
      },
    },
  });
  const initialize = JSON.stringify({
    jsonrpc: "2.0",
    id: "i",
    method: "initialize",
    params: {
      protocolVersion: "2025-03-26",
      capabilities: {},
      clientInfo: { name: "r", version: "0" },
    },
  });
  assert.deepEqual(await answers(old, [`[${PING},${stateless}]`, `[${initialize},${PING}]`], 2), [
    invalidRequest("JSON-RPC batches are not supported by protocol 2026-07-28"),
    invalidRequest("initialize must not be part of a JSON-RPC batch"),
  ]);
  assert.equal((await old.close()).code, 0);

  // Before initialize there is no session to batch on.
  const fresh = start();
  assert.deepEqual(await answers(fresh, [`[${PING}]`], 1), [
    invalidRequest("JSON-RPC batches need an initialized 2025-03-26 session"),
  ]);
  assert.equal((await fresh.close()).code, 0);
});

Deno.test("stdio batch: beyond 1,000 entries one -32600 answers the whole batch", async () => {
  const server = await session("2025-03-26");
  const pings = (n: number) => `[${Array.from({ length: n }, () => PING).join(",")}]`;
  const served = await answers(server, [pings(1000)], 1);
  assert.equal((served[0] as unknown[]).length, 1000);
  const ones = `[${Array(100_000).fill(1).join(",")}]`;
  assert.deepEqual(await answers(server, [pings(1001), ones], 2), [
    invalidRequest(
      "Invalid Request: a JSON-RPC batch holds at most 1000 entries (this one has 1001)",
    ),
    invalidRequest(
      "Invalid Request: a JSON-RPC batch holds at most 1000 entries (this one has 100000)",
    ),
  ]);
  assert.equal((await server.close()).code, 0);
});

Deno.test("stdio batch: an answer past 8 MiB keeps every id, the rest as short -32603 errors", async () => {
  const server = await session("2025-03-26");
  const text = "x".repeat(10_000);
  const calls = Array.from({ length: 1000 }, (_, i) =>
    JSON.stringify({
      jsonrpc: "2.0",
      id: i,
      method: "tools/call",
      params: { name: "echo", arguments: { text } },
    }));
  const [answer] = await answers(server, [`[${calls.join(",")}]`], 1) as Record<
    string,
    unknown
  >[][];
  assert.equal(answer.length, 1000);
  assert.deepEqual(new Set(answer.map((m) => m.id)).size, 1000);
  const cut = answer.filter((m) => m.error);
  assert.ok(cut.length > 0 && cut.length < 300, `${cut.length} left out`);
  for (const m of cut) assert.equal((m.error as { code: number }).code, -32603);
  assert.ok(server.lines.every((line) => line.length < 8 * 1024 * 1024 + 200_000));
  assert.equal((await server.close()).code, 0);
});
