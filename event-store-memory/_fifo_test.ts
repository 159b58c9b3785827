import assert from "node:assert/strict";
import { Fifo } from "./_fifo.ts";

Deno.test("fifo keeps order across compaction", () => {
  const queue = new Fifo<number>();
  for (let i = 0; i < 5_000; i++) queue.push(i);
  for (let i = 0; i < 3_000; i++) assert.equal(queue.shift(), i);
  assert.equal(queue.length, 2_000);
  assert.equal(queue.peek(), 3_000);
  assert.equal(queue.at(1_999), 4_999);
  assert.equal(queue.at(2_000), undefined);
  assert.deepEqual(queue.slice(1_998), [4_998, 4_999]);
  queue.retain((n) => n % 1000 === 0);
  assert.deepEqual(queue.slice(0), [3_000, 4_000]);
  queue.shift();
  queue.shift();
  assert.equal(queue.shift(), undefined);
  assert.equal(queue.length, 0);
});
