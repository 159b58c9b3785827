import { taskStoreContract } from "@anubis/testing";
import { KvTaskStore } from "./mod.ts";

// The contract on a real KV file in a temp dir, one database per case.
for (
  const c of taskStoreContract(async () => {
    const dir = await Deno.makeTempDir();
    const kv = await Deno.openKv(`${dir}/tasks.kv`);
    return {
      store: new KvTaskStore(kv),
      close: async () => {
        kv.close();
        await Deno.remove(dir, { recursive: true });
      },
    };
  })
) Deno.test(`kv ${c.name}`, c.fn);

import assert from "node:assert/strict";
import { TaskLimitError, type TaskRecord } from "@anubis/core";

function task(id: string, owner: string, ttlMs: number | null = null): TaskRecord {
  const now = Date.now();
  return {
    v: 1,
    id,
    owner,
    method: "tools/call",
    status: "working",
    createdAt: now,
    updatedAt: now,
    ttlMs,
    expiresAt: ttlMs === null ? null : now + ttlMs,
  };
}

async function withStore(
  options: ConstructorParameters<typeof KvTaskStore>[1],
  body: (store: KvTaskStore) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir();
  const kv = await Deno.openKv(`${dir}/tasks.kv`);
  try {
    await body(new KvTaskStore(kv, options));
  } finally {
    kv.close();
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("kv task store: a caller over its share is refused, whatever its tasks' status; others are not", () =>
  withStore({ maxTasks: 100, maxTasksPerCaller: 3 }, async (store) => {
    for (const id of ["a1", "a2", "a3"]) await store.create(task(id, "session:a"));
    await store.update("a1", { status: "input_required", inputRequests: { q: {} } });
    await store.finish("a2", { status: "completed", result: { content: [] } });
    const refused = await store.create(task("a4", "session:a")).catch((e) => e);
    assert.ok(refused instanceof TaskLimitError);
    assert.equal(refused.scope, "caller");
    assert.equal(refused.limit, 3);
    assert.equal(await store.get("a4"), undefined);
    await store.create(task("b1", "session:b"));
    assert.equal(store.heldBy("session:a"), 3);
    assert.equal(store.heldBy("session:b"), 1);
    // Deleting frees the share; a duplicate id is refused without changing the count.
    await store.delete("a1");
    await store.create(task("a4", "session:a"));
    await assert.rejects(store.create(task("a4", "session:a")), /exists/);
    assert.equal(store.heldBy("session:a"), 3);
    assert.equal(store.size, 4);
  }));

Deno.test("kv task store: the total bound refuses; expired tasks leave the count", () =>
  withStore({ maxTasks: 4, maxTasksPerCaller: 2 }, async (store) => {
    await store.create(task("s1", "session:a", 100));
    await store.create(task("s2", "session:a", 100));
    await store.create(task("b1", "session:b"));
    await store.create(task("c1", "session:c"));
    const full = await store.create(task("d1", "session:d")).catch((e) => e);
    assert.ok(full instanceof TaskLimitError);
    assert.equal(full.scope, "total");
    assert.equal(full.limit, 4);
    await new Promise((resolve) => setTimeout(resolve, 200));
    // The two short ones expired: room for the same caller and another one.
    await store.create(task("d1", "session:d"));
    await store.create(task("s3", "session:a"));
    assert.equal(store.size, 4);
    assert.equal(store.heldBy("session:a"), 1);
  }));

Deno.test("kv task store: renew writes many leases at once, leaves ended tasks alone, reports each status", () =>
  withStore({}, async (store) => {
    const ids = Array.from({ length: 120 }, (_, i) => `r${i}`);
    for (const id of ids) await store.create(task(id, `session:${id.length}`, 60_000));
    await store.finish("r7", { status: "cancelled" });
    await store.update("r8", { status: "input_required", inputRequests: { q: {} } });
    const lease = { holder: "instance-b", expiresAt: Date.now() + 15_000 };
    const statuses = await store.renew([...ids, "unknown"], lease);
    assert.equal(statuses.length, 121);
    assert.equal(statuses[7], "cancelled");
    assert.equal(statuses[8], "input_required");
    assert.equal(statuses[120], undefined);
    assert.equal(statuses.filter((s) => s === "working").length, 118);
    for (const id of ids) {
      const record = await store.get(id);
      if (id === "r7") assert.equal(record?.lease, undefined);
      else assert.deepEqual(record?.lease, lease, id);
    }
    assert.deepEqual((await store.get("r8"))?.inputRequests, { q: {} });
  }));
