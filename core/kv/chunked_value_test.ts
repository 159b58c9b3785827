import assert from "node:assert/strict";
import { chunkWrites, MAX_PARTS_PER_COMMIT, readChunked, readHead } from "./chunked_value.ts";
import { CHUNK_BYTES } from "./chunks.ts";
import type { KvKey, KvLike } from "./kv_like.ts";

async function withKv(body: (kv: KvLike) => Promise<void>): Promise<void> {
  const kv = await Deno.openKv(":memory:");
  try {
    await body(kv);
  } finally {
    kv.close();
  }
}

async function write(kv: KvLike, key: KvKey, header: object, bytes: Uint8Array) {
  const op = kv.atomic();
  for (const w of chunkWrites(key, header, bytes)) op.set(w.key, w.value);
  return await op.commit();
}

const bytesOf = (length: number) => Uint8Array.from({ length }, (_, i) => i % 251);

Deno.test("values of every size round-trip byte-exact, each part within one KV value", async () => {
  await withKv(async (kv) => {
    for (const length of [0, 1, CHUNK_BYTES, CHUNK_BYTES + 1, 3 * CHUNK_BYTES + 7]) {
      const key = ["v", length];
      assert.ok((await write(kv, key, { length }, bytesOf(length))).ok);
      const value = await readChunked<{ length: number }>(kv, key);
      assert.deepEqual(value?.bytes, bytesOf(length));
      assert.equal(value?.header.length, length);
      assert.equal(value?.header.parts, Math.max(1, Math.ceil(length / CHUNK_BYTES)));
      for await (const entry of kv.list<Uint8Array>({ prefix: key })) {
        assert.ok(entry.value.length <= 65_536);
      }
    }
  });
});

Deno.test("MAX_PARTS_PER_COMMIT full parts fit in one atomic commit", async () => {
  await withKv(async (kv) => {
    const bytes = bytesOf(MAX_PARTS_PER_COMMIT * CHUNK_BYTES);
    assert.equal(chunkWrites(["big"], {}, bytes).length, MAX_PARTS_PER_COMMIT);
    assert.ok((await write(kv, ["big"], { at: Date.now() }, bytes)).ok);
    assert.equal((await readChunked(kv, ["big"]))?.bytes.length, bytes.length);
  });
});

Deno.test("a value missing a part reads as gone, a missing head as undefined", async () => {
  await withKv(async (kv) => {
    await write(kv, ["v"], {}, bytesOf(2 * CHUNK_BYTES + 1));
    await kv.atomic().delete(["v", 2]).commit();
    assert.equal(await readChunked(kv, ["v"]), undefined);
    assert.equal(await readChunked(kv, ["nothing"]), undefined);
  });
});

Deno.test("readHead refuses bytes that are not a head", () => {
  assert.throws(() => readHead(new Uint8Array([1, 2])), TypeError);
  assert.throws(() => readHead("head" as unknown as Uint8Array), TypeError);
});
