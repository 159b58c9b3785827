import assert from "node:assert/strict";
import { encodeOutbound, reportUnencodable, type UnencodableMessage } from "./outbound.ts";
import { configureLogger } from "./logger.ts";

Deno.test("encodeOutbound: a response JSON cannot encode becomes -32603 for its id; a notification is dropped", () => {
  const problems: UnencodableMessage[] = [];
  const report = (problem: UnencodableMessage) => void problems.push(problem);
  const ok = { jsonrpc: "2.0", id: 1, result: {} } as const;
  assert.equal(encodeOutbound(ok, report), '{"jsonrpc":"2.0","id":1,"result":{}}');
  const circular: Record<string, unknown> = {};
  circular.self = circular;
  const bigint = { jsonrpc: "2.0", id: "a", result: { _meta: { n: 1n } } } as const;
  assert.deepEqual(JSON.parse(encodeOutbound(bigint, report)!), {
    jsonrpc: "2.0",
    id: "a",
    error: {
      code: -32603,
      message:
        "Internal error: the response could not be encoded as JSON (Do not know how to serialize a BigInt)",
    },
  });
  const failed = {
    jsonrpc: "2.0",
    id: 2,
    error: { code: 1, message: "m", data: circular },
  } as const;
  assert.equal(JSON.parse(encodeOutbound(failed, report)!).error.code, -32603);
  const note = { jsonrpc: "2.0", method: "notifications/message", params: { data: 1n } } as const;
  assert.equal(encodeOutbound(note, report), undefined);
  const request = { jsonrpc: "2.0", id: "s-1", method: "x", params: { circular } } as const;
  assert.equal(encodeOutbound(request, report), undefined);
  assert.deepEqual(problems.map((p) => [p.message, p.replaced]), [
    [bigint, true],
    [failed, true],
    [note, false],
    [request, false],
  ]);
  assert.match(problems[1].reason, /circular/);
  assert.ok(problems.every((p) => !p.reason.includes("\n")));
  // A batch keeps what encodes, and the replacements; nothing left is undefined.
  assert.deepEqual(
    JSON.parse(encodeOutbound([ok, bigint, note])!).map((m: { id: unknown }) => m.id),
    [
      1,
      "a",
    ],
  );
  assert.equal(encodeOutbound([note]), undefined);
  assert.equal(
    encodeOutbound({
      jsonrpc: "2.0",
      id: 3,
      result: {
        toJSON: () => {
          throw "plain";
        },
      },
    }),
    '{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"Internal error: the response could not be encoded as JSON (plain)"}}',
  );
});

Deno.test("reportUnencodable: one error event naming the message and what became of it, never its content", () => {
  const lines: string[] = [];
  configureLogger({ format: "json", write: (line) => lines.push(line) });
  try {
    const reason = "Do not know how to serialize a BigInt";
    reportUnencodable({
      message: { jsonrpc: "2.0", id: 7, result: { secret: "s3cret" } },
      reason,
      replaced: true,
    });
    reportUnencodable({
      message: { jsonrpc: "2.0", method: "notifications/message", params: { secret: "s3cret" } },
      reason,
      replaced: false,
    });
    configureLogger({ format: "pretty", write: (line) => lines.push(line) });
    reportUnencodable({ message: { jsonrpc: "2.0", id: "a", result: {} }, reason, replaced: true });
  } finally {
    configureLogger({});
  }
  assert.equal(lines.length, 3);
  for (const line of lines) assert.doesNotMatch(line, /s3cret/);
  const [replaced, dropped] = lines.slice(0, 2).map((line) => JSON.parse(line));
  assert.equal(typeof replaced.time, "string");
  assert.deepEqual({ ...replaced, time: undefined }, {
    time: undefined,
    level: "error",
    event: "message.unencodable",
    msg:
      "the response to 7 could not be encoded as JSON (Do not know how to serialize a BigInt); sent -32603 instead",
    id: "7",
    reason: "Do not know how to serialize a BigInt",
    replaced: true,
  });
  assert.deepEqual({ ...dropped, time: undefined }, {
    time: undefined,
    level: "error",
    event: "message.unencodable",
    msg:
      "dropped notifications/message: it could not be encoded as JSON (Do not know how to serialize a BigInt)",
    method: "notifications/message",
    reason: "Do not know how to serialize a BigInt",
    replaced: false,
  });
  assert.equal(
    lines[2],
    "anubis: the response to a could not be encoded as JSON (Do not know how to serialize a BigInt); sent -32603 instead",
  );
});
