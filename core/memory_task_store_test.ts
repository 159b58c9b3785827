import assert from "node:assert/strict";
import { MemoryTaskStore, TaskLimitError, type TaskRecord } from "./mod.ts";

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
  const store = new MemoryTaskStore({ maxTasks: 3, maxTasksPerCaller: 10 });
  for (const id of ["a", "b", "c"]) await store.create(task(id));
  await assert.rejects(store.create(task("d")), /full/);
  await store.finish("b", { status: "completed", result: { content: [] } });
  await store.create(task("d"));
  assert.equal(store.size, 3);
  assert.equal(await store.get("b"), undefined);
  assert.deepEqual((await store.list("o")).tasks.map((t) => t.id), ["a", "c", "d"]);
});

Deno.test("a full memory task store reclaims expired tasks first", async () => {
  const store = new MemoryTaskStore({ maxTasks: 2, maxTasksPerCaller: 10 });
  await store.create(task("short", 50));
  await store.create(task("done"));
  await store.finish("done", { status: "cancelled" });
  await new Promise((r) => setTimeout(r, 120));
  await store.create(task("new"));
  assert.equal((await store.get("done"))?.status, "cancelled");
  assert.equal(await store.get("short"), undefined);
  assert.equal(store.size, 2);
});

function owned(id: string, owner: string, caller?: string): TaskRecord {
  const record = { ...task(id), owner };
  return caller === undefined ? record : { ...record, caller };
}

Deno.test("a memory task store counts every task of a caller, whatever its status, against its share", async () => {
  const store = new MemoryTaskStore({ maxTasks: 100, maxTasksPerCaller: 3 });
  for (const id of ["a1", "a2", "a3"]) await store.create(owned(id, "session:a"));
  // Waiting for input and running alike: the share is used, and the next one is refused.
  await store.update("a1", { status: "input_required", inputRequests: { q: {} } });
  const refused = await store.create(owned("a4", "session:a")).catch((e) => e);
  assert.ok(refused instanceof TaskLimitError);
  assert.equal(refused.scope, "caller");
  assert.equal(refused.limit, 3);
  assert.equal(store.heldBy("session:a"), 3);
  // Another caller is not affected.
  await store.create(owned("b1", "session:b"));
  assert.equal(store.heldBy("session:b"), 1);
  // A completed task counts until it expires or is deleted.
  await store.finish("a2", { status: "completed", result: { content: [] } });
  await assert.rejects(store.create(owned("a4", "session:a")), TaskLimitError);
  assert.equal((await store.get("a2"))?.status, "completed");
  // Deleting frees the share.
  await store.delete("a2");
  assert.equal(store.heldBy("session:a"), 2);
  await store.create(owned("a4", "session:a"));
  assert.deepEqual((await store.list("session:a")).tasks.map((t) => t.id), ["a1", "a3", "a4"]);
  // An expired task of the caller makes room.
  await store.create({ ...task("short", 30), owner: "session:c" });
  await store.create(owned("c2", "session:c"));
  await store.create(owned("c3", "session:c"));
  await new Promise((resolve) => setTimeout(resolve, 60));
  await store.create(owned("c4", "session:c"));
  assert.equal(store.heldBy("session:c"), 3);
});

Deno.test("a memory task store counts a task against its caller, not its owner, when it names one", async () => {
  const store = new MemoryTaskStore({ maxTasks: 100, maxTasksPerCaller: 2 });
  await store.create(owned("x1", "anonymous", "client:10.0.0.1"));
  await store.create(owned("x2", "anonymous", "client:10.0.0.1"));
  await assert.rejects(store.create(owned("x3", "anonymous", "client:10.0.0.1")), TaskLimitError);
  // Another client of the same (anonymous) owner still has its own share.
  await store.create(owned("y1", "anonymous", "client:10.0.0.2"));
  assert.equal(store.heldBy("client:10.0.0.1"), 2);
  assert.equal(store.heldBy("client:10.0.0.2"), 1);
  assert.equal(store.heldBy("anonymous"), 0);
  assert.deepEqual((await store.list("anonymous")).tasks.map((t) => t.id), ["x1", "x2", "y1"]);
});

Deno.test("a memory task store full of running tasks refuses with the total bound; the default share is a tenth", async () => {
  const store = new MemoryTaskStore({ maxTasks: 20 });
  for (let i = 0; i < 2; i++) await store.create(owned(`a${i}`, "session:a"));
  const refused = await store.create(owned("a2", "session:a")).catch((e) => e);
  assert.ok(refused instanceof TaskLimitError);
  assert.equal(refused.scope, "caller");
  assert.equal(refused.limit, 2);
  for (let c = 1; c < 10; c++) {
    for (let i = 0; i < 2; i++) await store.create(owned(`c${c}-${i}`, `session:${c}`));
  }
  assert.equal(store.size, 20);
  const full = await store.create(owned("late", "session:late")).catch((e) => e);
  assert.ok(full instanceof TaskLimitError);
  assert.equal(full.scope, "total");
  assert.equal(full.limit, 20);
  assert.match(full.message, /full/);
});
