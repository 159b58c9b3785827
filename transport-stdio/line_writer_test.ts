import assert from "node:assert/strict";
import { LineWriter } from "./line_writer.ts";

const text = new TextDecoder();
const ok = (id: number) => ({ jsonrpc: "2.0", id, result: {} }) as const;

Deno.test("LineWriter: messages of one turn leave together; those written during a write, after it", async () => {
  const chunks: string[] = [];
  let release!: () => void;
  const first = new Promise<void>((resolve) => (release = resolve));
  const stream = new WritableStream<Uint8Array>({
    write: async (chunk) => {
      chunks.push(text.decode(chunk));
      if (chunks.length === 1) await first;
    },
  });
  const writer = stream.getWriter();
  const lines = new LineWriter(writer);
  const together = [lines.write(ok(1)), lines.write(ok(2))];
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.deepEqual(chunks, [`${JSON.stringify(ok(1))}\n${JSON.stringify(ok(2))}\n`]);
  const rest = [3, 4].map((id) => lines.write(ok(id)));
  // Backpressure: nothing more is handed to the stream until the first write is done.
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.equal(chunks.length, 1);
  release();
  await Promise.all([...together, ...rest]);
  await lines.drained();
  assert.deepEqual(
    chunks,
    [1, 3].map((id) => `${JSON.stringify(ok(id))}\n${JSON.stringify(ok(id + 1))}\n`),
  );
  await writer.close();
});

Deno.test("LineWriter: after a failed write the stream is broken and later messages are dropped", async () => {
  let writes = 0;
  const stream = new WritableStream<Uint8Array>({
    write: () => {
      writes++;
      throw new Error("closed pipe");
    },
  });
  const writer = stream.getWriter();
  const lines = new LineWriter(writer);
  await lines.write(ok(1));
  assert.equal(lines.broken, true);
  await lines.write(ok(2));
  await lines.drained();
  assert.equal(writes, 1);
  writer.releaseLock();
});

Deno.test("LineWriter: past the high-water mark it is full until the stream takes the output", async () => {
  const releases: (() => void)[] = [];
  const stream = new WritableStream<Uint8Array>({
    write: () => new Promise<void>((resolve) => releases.push(resolve)),
  });
  const writer = stream.getWriter();
  const lines = new LineWriter(writer, { highWaterMark: 100 });
  const line = JSON.stringify(ok(1)).length + 1;
  lines.write(ok(1));
  assert.equal(lines.buffered, line);
  assert.equal(lines.full, false);
  await lines.ready;
  for (let i = 2; i <= 10; i++) lines.write(ok(1));
  assert.equal(lines.buffered, 10 * line);
  assert.equal(lines.full, true);
  let ready = false;
  lines.ready.then(() => (ready = true));
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.equal(ready, false);
  // The first write carried line 1: still full. The second carries the other nine.
  releases.shift()!();
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.equal(lines.buffered, 9 * line);
  assert.equal(ready, false);
  releases.shift()!();
  await lines.ready;
  assert.equal(ready, true);
  assert.equal(lines.buffered, 0);
  await lines.drained();
  await writer.close();
});

Deno.test("LineWriter: a message JSON cannot encode is reported, never thrown", async () => {
  const chunks: string[] = [];
  const stream = new WritableStream<Uint8Array>({
    write: (chunk) => void chunks.push(text.decode(chunk)),
  });
  const writer = stream.getWriter();
  const reasons: string[] = [];
  const lines = new LineWriter(writer, { onUnencodable: (p) => void reasons.push(p.reason) });
  await lines.write({ jsonrpc: "2.0", method: "notifications/message", params: { n: 1n } });
  await lines.write({ jsonrpc: "2.0", id: 7, result: { n: 1n } });
  await lines.drained();
  assert.equal(chunks.length, 1);
  assert.deepEqual(JSON.parse(chunks[0]).error.code, -32603);
  assert.equal(reasons.length, 2);
  assert.equal(lines.buffered, 0);
  await writer.close();
});
