import assert from "node:assert/strict";
import { batchContentRefusal, batchSessionRefusal, splitBatch } from "./batch.ts";
import type { Dialect } from "./dialect.ts";
import { decodeMessage } from "./json_rpc.ts";

const PING = '{"jsonrpc":"2.0","id":"p","method":"ping"}';
const STATELESS = JSON.stringify({
  jsonrpc: "2.0",
  method: "notifications/cancelled",
  params: { _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28" } },
});

function entries(text: string) {
  const decoded = decodeMessage(text);
  assert.equal(decoded.kind, "batch");
  return decoded.kind === "batch" ? decoded.entries : [];
}

Deno.test("splitBatch: messages to serve, errors for invalid entries and nested batches, in order", () => {
  // The decoder answers a nested array as an invalid entry; a nested batch entry is refused too.
  const decoded = entries(`[${PING},1,{"jsonrpc":"2.0","id":"r","result":{}}]`);
  const { messages, errors } = splitBatch([...decoded, { kind: "batch", entries: [] }]);
  assert.deepEqual(messages, [JSON.parse(PING), { jsonrpc: "2.0", id: "r", result: {} }]);
  assert.deepEqual(errors.map((e) => e.error), [
    { code: -32600, message: "Invalid Request: not a JSON object" },
    { code: -32600, message: "Invalid Request: nested batch" },
  ]);
});

Deno.test("batchContentRefusal: stateless messages and initialize refuse the batch", () => {
  const refusal = (text: string) => batchContentRefusal(splitBatch(entries(text)).messages);
  assert.equal(refusal(`[${PING},{"jsonrpc":"2.0","id":"r","result":{}}]`), undefined);
  assert.equal(
    refusal(`[${PING},${STATELESS}]`),
    "JSON-RPC batches are not supported by protocol 2026-07-28",
  );
  assert.equal(
    refusal(`[{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}]`),
    "initialize must not be part of a JSON-RPC batch",
  );
});

Deno.test("batchSessionRefusal: only an initialized session whose version batches takes batches", () => {
  const dialect = (version: string, batching: boolean) =>
    ({ version, transportRules: { batching } }) as unknown as Dialect;
  assert.equal(
    batchSessionRefusal(undefined),
    "JSON-RPC batches need an initialized 2025-03-26 session",
  );
  assert.equal(batchSessionRefusal(dialect("2025-03-26", true)), undefined);
  assert.equal(
    batchSessionRefusal(dialect("2025-06-18", false)),
    "JSON-RPC batches are not supported by protocol 2025-06-18",
  );
});
