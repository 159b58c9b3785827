import assert from "node:assert/strict";
import { encodeSseComment, encodeSseEvent, encodeSseMessage } from "./_sse_encoding.ts";
import { SseStream } from "./_sse_stream.ts";

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

Deno.test("sse: events, priming events, comments and multi-line data", () => {
  assert.equal(text(encodeSseMessage('{"a":1}', 4)), 'id: 4\nevent: message\ndata: {"a":1}\n\n');
  assert.equal(text(encodeSseMessage("{}")), "event: message\ndata: {}\n\n");
  assert.equal(
    text(encodeSseEvent({ id: 0, retry: 3000, data: "" })),
    "id: 0\nretry: 3000\ndata: \n\n",
  );
  assert.equal(text(encodeSseEvent({ data: "a\r\nb\nc" })), "data: a\ndata: b\ndata: c\n\n");
  assert.equal(text(encodeSseComment("keepalive")), ": keepalive\n\n");
});

Deno.test("sse stream: writes after close are ignored; a cancel ends it and fires the signal", async () => {
  const stream = new SseStream();
  assert.equal(stream.write(encodeSseMessage("1")), true);
  stream.close();
  assert.equal(stream.write(encodeSseMessage("2")), false);
  assert.equal(await new Response(stream.readable).text(), "event: message\ndata: 1\n\n");

  const cancelled = new SseStream({ keepAliveMs: 60_000 });
  let aborted = false;
  cancelled.signal.addEventListener("abort", () => (aborted = true));
  await cancelled.readable.cancel();
  assert.equal(aborted, true);
  assert.equal(cancelled.open, false);
});

Deno.test("sse stream: a client that stops reading is cut off once more than the budget is unread", async () => {
  const stream = new SseStream({ maxBufferedBytes: 100_000 });
  await Promise.resolve(); // The reader's first pull.
  const chunk = new Uint8Array(1024);
  let writes = 0;
  while (stream.write(chunk)) writes++;
  // One write goes straight to the reader's queue; 97 more fit in the budget.
  assert.equal(writes, 1 + Math.floor(100_000 / 1024));
  assert.equal(stream.open, false);
  await stream.readable.cancel();
});

Deno.test("sse stream: what a slow reader left unread is read in order, in blocks, up to the close", async () => {
  const stream = new SseStream();
  const encoder = new TextEncoder();
  let expected = "";
  for (let i = 0; i < 5_000; i++) {
    const line = `: ${i}\n\n`;
    expected += line;
    assert.equal(stream.write(encoder.encode(line)), true);
  }
  stream.close();
  const decoder = new TextDecoder();
  let read = "";
  let chunks = 0;
  for await (const chunk of stream.readable) {
    read += decoder.decode(chunk, { stream: true });
    chunks++;
  }
  assert.equal(read, expected);
  assert.ok(chunks < 10, `${chunks} chunks for 5,000 writes`);
});
