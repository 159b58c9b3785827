import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import type { StoredEvent } from "@anubis/core";
import { KvEventStore } from "./kv_event_store.ts";

const worker = (name: string) => fileURLToPath(new URL(`./testdata/${name}`, import.meta.url));

function run(script: string, args: string[]): Promise<Deno.CommandOutput> {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "--unstable-kv", "--allow-read", "--allow-write", worker(script), ...args],
    stdout: "piped",
    stderr: "piped",
  }).output();
}

function decoded(output: Deno.CommandOutput): string {
  const text = new TextDecoder();
  assert.equal(output.code, 0, text.decode(output.stderr));
  return text.decode(output.stdout);
}

Deno.test("three processes appending to one session get ids 1..N, no gap, no duplicate", async () => {
  const dir = await Deno.makeTempDir({ prefix: "anubis_kv_procs_" });
  const path = `${dir}/events.kv`;
  try {
    const perProcess = 100;
    const outputs = await Promise.all(
      ["p1", "p2", "p3"].map((tag) =>
        run("append_worker.ts", [path, "shared", `${perProcess}`, tag])
      ),
    );
    const byProcess = outputs.map((o) => JSON.parse(decoded(o)) as number[]);
    for (const ids of byProcess) {
      assert.deepEqual(ids, [...ids].sort((a, b) => a - b), "each process sees its ids increase");
    }
    const all = byProcess.flat().sort((a, b) => a - b);
    assert.deepEqual(all, Array.from({ length: 3 * perProcess }, (_, i) => i + 1));

    const kv = await Deno.openKv(path);
    try {
      const store = new KvEventStore(kv);
      const events = await store.replay("shared", 0);
      assert.equal(await store.latestId("shared"), 3 * perProcess);
      assert.deepEqual(events.map((e) => e.id), all);
      ["p1", "p2", "p3"].forEach((tag, p) => {
        for (const [i, id] of byProcess[p].entries()) {
          assert.equal(events[id - 1].data, `${tag}:${i}`, "each id holds its own process's event");
        }
      });
    } finally {
      kv.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a tail sees the events another process appends", async () => {
  const dir = await Deno.makeTempDir({ prefix: "anubis_kv_tail_" });
  const path = `${dir}/events.kv`;
  const kv = await Deno.openKv(path);
  try {
    const store = new KvEventStore(kv, { pollIntervalMs: 25 });
    await store.append("s", "before");
    const stop = new AbortController();
    const received: StoredEvent[] = [];
    const tailing = (async () => {
      for await (const event of store.tail("s", 1, stop.signal)) {
        received.push(event);
        if (received.length === 20) stop.abort();
      }
    })();
    const child = await run("tail_worker.ts", [path, "s", "20"]);
    decoded(child);
    await tailing;
    assert.deepEqual(received.map((e) => e.id), Array.from({ length: 20 }, (_, i) => i + 2));
    assert.deepEqual(
      received.map((e) => e.data),
      Array.from({ length: 20 }, (_, i) => `live ${i}`),
    );
  } finally {
    kv.close();
    await Deno.remove(dir, { recursive: true });
  }
});
