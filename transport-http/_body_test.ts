import assert from "node:assert/strict";
import { readMessage } from "./_body.ts";

const PING = '{"jsonrpc":"2.0","id":1,"method":"ping"}';

function announced(body: string | Uint8Array<ArrayBuffer>): Request {
  const bytes = typeof body === "string" ? new TextEncoder().encode(body) : body;
  return new Request("http://localhost/mcp", {
    method: "POST",
    headers: { "content-length": String(bytes.byteLength) },
    body: bytes,
  });
}

function unannounced(chunks: (string | Error)[]): Request {
  const encoder = new TextEncoder();
  let next = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      const chunk = chunks[next++];
      if (chunk === undefined) controller.close();
      else if (chunk instanceof Error) controller.error(chunk);
      else controller.enqueue(encoder.encode(chunk));
    },
  });
  return new Request("http://localhost/mcp", { method: "POST", body });
}

Deno.test("readMessage: an announced body is parsed and classified", async () => {
  const decoded = await readMessage(announced(PING), { maxBytes: 1024 });
  assert.equal(decoded?.kind, "request");
  assert.equal(decoded?.kind === "request" && decoded.message.method, "ping");
});

Deno.test("readMessage: an unannounced body is read in pieces and classified", async () => {
  const decoded = await readMessage(unannounced([PING.slice(0, 10), PING.slice(10)]), {
    maxBytes: 1024,
  });
  assert.equal(decoded?.kind === "request" && decoded.message.id, 1);
});

Deno.test("readMessage: text that is not JSON is -32700 with id null, announced or not", async () => {
  for (const request of [announced("{not json"), announced(""), unannounced(["{", "x"])]) {
    const decoded = await readMessage(request, { maxBytes: 1024 });
    assert.equal(decoded?.kind, "invalid");
    if (decoded?.kind !== "invalid") continue;
    assert.deepEqual(decoded.error.error, { code: -32700, message: "Parse error" });
    assert.equal(decoded.error.id, null);
  }
});

Deno.test("readMessage: invalid UTF-8 inside a string becomes U+FFFD, as Request.text() does", async () => {
  const bytes = new Uint8Array([
    ...new TextEncoder().encode('{"jsonrpc":"2.0","method":"x","params":{"a":"'),
    0xff,
    0x22,
    0x7d,
    0x7d,
  ]);
  const decoded = await readMessage(announced(bytes), { maxBytes: 1024 });
  assert.equal(decoded?.kind === "notification" && decoded.message.params?.a, "\uFFFD");
});

Deno.test("readMessage: a body over the bound is refused by its announced length before reading", async () => {
  let pulled = 0;
  let cancelled = false;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      pulled++;
      controller.enqueue(new Uint8Array(64).fill(0x20));
    },
    cancel() {
      cancelled = true;
    },
  }, { highWaterMark: 0 });
  const request = new Request("http://localhost/mcp", {
    method: "POST",
    headers: { "content-length": "100" },
    body,
  });
  assert.equal(await readMessage(request, { maxBytes: 99 }), undefined);
  assert.equal(pulled, 0);
  assert.ok(cancelled);
});

Deno.test("readMessage: an unannounced body stops being read once it passes the bound", async () => {
  let pulled = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      pulled++;
      controller.enqueue(new Uint8Array(64).fill(0x20));
    },
  });
  const request = new Request("http://localhost/mcp", { method: "POST", body });
  assert.equal(await readMessage(request, { maxBytes: 200 }), undefined);
  assert.ok(pulled <= 5, `pulled ${pulled} chunks`);
});

Deno.test("readMessage: a failing read rejects instead of passing for bad JSON", async () => {
  const failure = new TypeError("connection reset");
  await assert.rejects(
    () => readMessage(unannounced([PING.slice(0, 5), failure]), { maxBytes: 1024 }),
    failure,
  );
  const body = new ReadableStream<Uint8Array>({ pull: (controller) => controller.error(failure) });
  const request = new Request("http://localhost/mcp", {
    method: "POST",
    headers: { "content-length": "40" },
    body,
  });
  await assert.rejects(
    () => readMessage(request, { maxBytes: 1024 }),
    (error) => !(error instanceof SyntaxError),
  );
});
