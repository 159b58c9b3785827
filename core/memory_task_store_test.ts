import assert from "node:assert/strict";
import { MemoryTaskStore, type TaskRecord } from "./mod.ts";

function task(id: string, ttlMs: number | null = null): TaskRecord {
  const now = Date.now();
  return {
    v: 1,
    id,
    owner: "o",
    method: "tools/call",
    status: "working",
    createdAt: now,
    updatedAt: now,
    ttlMs,
    expiresAt: ttlMs === null ? null : now + ttlMs,
  };
}

Deno.test("a full memory task store makes room from terminal tasks, never running ones", async () => {
  const store = new MemoryTaskStore({ maxTasks: 3 });
  for (const id of ["a", "b", "c"]) await store.create(task(id));
  await assert.rejects(store.create(task("d")), /full/);
  await store.finish("b", { status: "completed", result: { content: [] } });
  await store.create(task("d"));
  assert.equal(store.size, 3);
  assert.equal(await store.get("b"), undefined);
  assert.deepEqual((await store.list("o")).tasks.map((t) => t.id), ["a", "c", "d"]);
});

Deno.test("a full memory task store reclaims expired tasks first", async () => {
  const store = new MemoryTaskStore({ maxTasks: 2 });
  await store.create(task("short", 50));
  await store.create(task("done"));
  await store.finish("done", { status: "cancelled" });
  await new Promise((r) => setTimeout(r, 120));
  await store.create(task("new"));
  assert.equal((await store.get("done"))?.status, "cancelled");
  assert.equal(await store.get("short"), undefined);
  assert.equal(store.size, 2);
});
