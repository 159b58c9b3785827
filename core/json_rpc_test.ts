import assert from "node:assert/strict";
import {
  decodeMessage,
  encodeMessage,
  errorResponse,
  isNotification,
  isRequest,
} from "./json_rpc.ts";

Deno.test("decodeMessage classifies requests, notifications and responses", () => {
  assert.deepEqual(decodeMessage('{"jsonrpc":"2.0","id":1,"method":"ping"}'), {
    kind: "request",
    message: { jsonrpc: "2.0", id: 1, method: "ping" },
  });
  assert.equal(
    decodeMessage('{"jsonrpc":"2.0","method":"notifications/initialized"}').kind,
    "notification",
  );
  assert.equal(decodeMessage('{"jsonrpc":"2.0","id":"a","result":{}}').kind, "response");
  assert.equal(
    decodeMessage('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}').kind,
    "error_response",
  );
});

Deno.test("decodeMessage answers text that is not JSON with -32700 and id null", () => {
  assert.deepEqual(decodeMessage("{nope"), {
    kind: "invalid",
    error: { jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } },
  });
  assert.equal((decodeMessage(new Uint8Array([0xff, 0xfe])) as { kind: string }).kind, "invalid");
});

Deno.test("decodeMessage answers JSON that is not JSON-RPC with -32600, echoing a readable id", () => {
  const cases: [string, string | number | null][] = [
    ['"just a string"', null],
    ['{"id":3,"method":"x"}', 3],
    ['{"jsonrpc":"1.0","id":"k","method":"x"}', "k"],
    ['{"jsonrpc":"2.0","id":4,"method":7}', 4],
    ['{"jsonrpc":"2.0","id":{"a":1},"method":"x"}', null],
    ['{"jsonrpc":"2.0","id":5,"method":"x","params":[1]}', 5],
    ['{"jsonrpc":"2.0","id":6}', 6],
    ['{"jsonrpc":"2.0","id":7,"result":3}', 7],
    ["[]", null],
  ];
  for (const [text, id] of cases) {
    const decoded = decodeMessage(text);
    assert.equal(decoded.kind, "invalid", text);
    if (decoded.kind !== "invalid") continue;
    assert.equal(decoded.error.error.code, -32600, text);
    assert.equal(decoded.error.id, id, text);
  }
});

Deno.test("decodeMessage classifies every entry of a batch", () => {
  const decoded = decodeMessage('[{"jsonrpc":"2.0","id":1,"method":"ping"},{"x":1}]');
  assert.equal(decoded.kind, "batch");
  if (decoded.kind !== "batch") return;
  assert.deepEqual(decoded.entries.map((e) => e.kind), ["request", "invalid"]);
});

Deno.test("encodeMessage is compact JSON and the builders produce exact shapes", () => {
  assert.equal(
    encodeMessage({ jsonrpc: "2.0", id: 1, result: {} }),
    '{"jsonrpc":"2.0","id":1,"result":{}}',
  );
  assert.deepEqual(errorResponse(2, -32602, "bad", { uri: "x" }), {
    jsonrpc: "2.0",
    id: 2,
    error: { code: -32602, message: "bad", data: { uri: "x" } },
  });
  assert.ok(isRequest({ jsonrpc: "2.0", id: 1, method: "ping" }));
  assert.ok(isNotification({ jsonrpc: "2.0", method: "notifications/cancelled" }));
});
