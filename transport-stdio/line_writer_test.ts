import assert from "node:assert/strict";
import { LineWriter } from "./line_writer.ts";

const text = new TextDecoder();

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
  const together = [lines.write({ id: 1 }), lines.write({ id: 2 })];
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.deepEqual(chunks, ['{"id":1}\n{"id":2}\n']);
  const rest = [3, 4].map((id) => lines.write({ id }));
  // Backpressure: nothing more is handed to the stream until the first write is done.
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.equal(chunks.length, 1);
  release();
  await Promise.all([...together, ...rest]);
  await lines.drained();
  assert.deepEqual(chunks, ['{"id":1}\n{"id":2}\n', '{"id":3}\n{"id":4}\n']);
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
  await lines.write({ id: 1 });
  assert.equal(lines.broken, true);
  await lines.write({ id: 2 });
  await lines.drained();
  assert.equal(writes, 1);
  writer.releaseLock();
});
