import assert from "node:assert/strict";
import type { EventStore, StoredEvent } from "@anubis/core";
import { MemoryEventStore } from "@anubis/event-store-memory";
import { StandaloneStream } from "./_standalone_stream.ts";

const TIMINGS = { retryMs: 1000, graceMs: 60_000, keepAliveMs: 0 };

async function read(stream: ReadableStream<Uint8Array>): Promise<string> {
  return await new Response(stream).text();
}

Deno.test("standalone stream: an append that fails is not delivered, later ones are", async () => {
  const inner = new MemoryEventStore();
  let fail = false;
  const store: EventStore = {
    append: (s, d) => fail ? Promise.reject(new Error("down")) : inner.append(s, d),
    replay: (s, a) => inner.replay(s, a),
    latestId: (s) => inner.latestId(s),
    delete: (s) => inner.delete(s),
  };
  const standalone = new StandaloneStream("s", { ...TIMINGS, eventStore: store });
  const stream = await standalone.attach(undefined, false);
  fail = true;
  const log = console.error;
  console.error = () => {};
  try {
    await standalone.send({ jsonrpc: "2.0", method: "lost" });
  } finally {
    console.error = log;
  }
  fail = false;
  await standalone.send({ jsonrpc: "2.0", method: "kept" });
  standalone.close();
  const text = await read(stream.readable);
  assert.ok(!text.includes("lost"));
  assert.ok(text.includes('id: 1\nevent: message\ndata: {"jsonrpc":"2.0","method":"kept"}'));
});

Deno.test("standalone stream: a bogus Last-Event-ID past the latest id hides nothing", async () => {
  const store = new MemoryEventStore();
  await store.append("s", '{"n":1}');
  const standalone = new StandaloneStream("s", { ...TIMINGS, eventStore: store });
  const stream = await standalone.attach(999, true);
  await standalone.send({ jsonrpc: "2.0", method: "next" });
  const reader = stream.readable.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes("next")) text += (await reader.read()).value;
  standalone.close();
  await reader.cancel();
  assert.ok(text.startsWith("id: 1\nretry: 1000\ndata: \n\n"), text);
  assert.ok(text.includes('id: 2\nevent: message\ndata: {"jsonrpc":"2.0","method":"next"}'));
});

Deno.test("standalone stream: a store failing to prime or replay fails the attach", async () => {
  const broken = {
    append: () => Promise.resolve(1),
    replay: () => Promise.reject(new Error("down")),
    latestId: () => Promise.reject(new Error("down")),
    delete: () => Promise.resolve(),
  } satisfies EventStore;
  const standalone = new StandaloneStream("s", { ...TIMINGS, eventStore: broken });
  await assert.rejects(standalone.attach(3, true), /down/);
  assert.equal(standalone.attached, false);
  standalone.close();
});

Deno.test("standalone stream: a tail() drives delivery when the store has one", async () => {
  const events: StoredEvent[] = [{ id: 1, data: '{"from":"another instance"}' }];
  const store: EventStore = {
    append: () => Promise.resolve(99),
    replay: () => Promise.resolve([]),
    latestId: () => Promise.resolve(0),
    delete: () => Promise.resolve(),
    async *tail(_s, afterId, signal) {
      for (const event of events) if (event.id > afterId && !signal.aborted) yield event;
    },
  };
  const standalone = new StandaloneStream("s", { ...TIMINGS, eventStore: store });
  const stream = await standalone.attach(undefined, false);
  // The tail ended, so the connection closed after delivering what it yielded.
  assert.equal(
    await read(stream.readable),
    'id: 1\nevent: message\ndata: {"from":"another instance"}\n\n',
  );
  standalone.close();
});

Deno.test("standalone stream: a message JSON cannot encode is dropped (a request rejects), later ones go out", async () => {
  for (const eventStore of [undefined, new MemoryEventStore()]) {
    const standalone = new StandaloneStream("s", { ...TIMINGS, eventStore });
    const stream = await standalone.attach(undefined, false);
    const log = console.error;
    console.error = () => {};
    try {
      await standalone.send({ jsonrpc: "2.0", method: "big", params: { n: 1n } });
      await assert.rejects(
        standalone.send({ jsonrpc: "2.0", id: "anubis-x-1", method: "big", params: { n: 1n } }),
        /could not be encoded/,
      );
    } finally {
      console.error = log;
    }
    await standalone.send({ jsonrpc: "2.0", method: "fine" });
    standalone.close();
    const text = await read(stream.readable);
    assert.ok(text.includes('"fine"') && !text.includes('"big"'), text);
  }
});

Deno.test("standalone stream: across instances the stream whose opening the store recorded later wins, whatever the clocks", async () => {
  const store = new MemoryEventStore();
  const options = { ...TIMINGS, eventStore: store, ordered: true };
  const [a, b, c] = [0, 1, 2].map(() => new StandaloneStream("s", options));
  const older = await a.attach(undefined, false);
  const newer = await b.attach(undefined, false);
  assert.ok(a.order! < b.order!);
  b.supersede(a.order); // A's announcement reaches B late: B's stream is newer
  assert.equal(newer.open, true);
  a.supersede(b.order);
  assert.equal(older.open, false);
  // A newer stream announced while C still records its opening: C's closes once it knows its place.
  const attaching = c.attach(undefined, false);
  c.supersede(b.order! + 10);
  assert.equal((await attaching).open, false);
  for (const stream of [a, b, c]) stream.close();
});
