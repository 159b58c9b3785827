import assert from "node:assert/strict";
import { LineWriter } from "./_line_writer.ts";

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

Deno.test("LineWriter: corked lines are handed to the stream when uncorked, in one write; a write in flight takes them next", async () => {
  const chunks: string[] = [];
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const stream = new WritableStream<Uint8Array>({
    write: async (chunk) => {
      chunks.push(text.decode(chunk));
      if (chunks.length === 2) await held;
    },
  });
  // The stream starts on a microtask; a write before that is queued by the stream itself.
  await new Promise((resolve) => setTimeout(resolve, 0));
  const lines = new LineWriter(stream.getWriter());
  lines.cork();
  const corked = [lines.write(ok(1)), lines.write(ok(2))];
  let drained = false;
  lines.drained().then(() => drained = true);
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.deepEqual(chunks, [], "nothing leaves while corked");
  assert.equal(drained, false, "drained waits for the corked lines");
  lines.uncork();
  assert.deepEqual(chunks, [`${JSON.stringify(ok(1))}\n${JSON.stringify(ok(2))}\n`], "at once");
  await Promise.all(corked);
  assert.equal(drained, true);
  // Uncorked while a write is in flight: the held lines go in the next write.
  const flight = lines.write(ok(3));
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.equal(chunks.length, 2);
  lines.cork();
  const next = [lines.write(ok(4)), lines.write(ok(5))];
  lines.uncork();
  assert.equal(chunks.length, 2, "not before the write in flight is done");
  release();
  await Promise.all([flight, ...next]);
  assert.deepEqual(chunks.slice(2), [`${JSON.stringify(ok(4))}\n${JSON.stringify(ok(5))}\n`]);
  // Uncorking with nothing held writes nothing.
  lines.cork();
  lines.uncork();
  await lines.drained();
  assert.equal(chunks.length, 3);
});

Deno.test("LineWriter: with reusable chunks every write is encoded into one buffer, and is whole when the stream reads it later", async () => {
  const written: string[] = [];
  const seen = new Set<ArrayBufferLike>();
  const stream = new WritableStream<Uint8Array>({
    // A stream that reads its chunk only after a while, as a pipe write does.
    write: async (chunk) => {
      seen.add(chunk.buffer);
      await new Promise((resolve) => setTimeout(resolve, 1));
      written.push(text.decode(chunk));
    },
  });
  const lines = new LineWriter(stream.getWriter(), { reusableChunks: true });
  const messages = [
    { jsonrpc: "2.0", method: "a", params: { text: "short" } },
    { jsonrpc: "2.0", method: "b", params: { text: "é😀€".repeat(9000) } }, // fits in units, not in bytes
    { jsonrpc: "2.0", method: "c", params: { text: "x".repeat(70_000) } }, // longer than the buffer
    { jsonrpc: "2.0", method: "d", params: { text: "short again" } },
  ] as const;
  for (const message of messages) await lines.write(message);
  assert.deepEqual(written, messages.map((message) => JSON.stringify(message) + "\n"));
  assert.equal(seen.size, 3, "the short ones share a buffer; the two long ones have their own");
});
