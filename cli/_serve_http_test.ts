import assert from "node:assert/strict";
import { defineServer } from "@anubis/core";
import { KvTaskStore } from "@anubis/session-kv";
import { joinInstances, KvDatabases, openStores } from "./_serve_http.ts";

const server = () => defineServer({ name: "joined", version: "1" });

/** Two instances joined on one fresh KV file with `flags`; `body` gets both. */
async function withJoined(
  flags: { eventStore?: string; sessionStore?: string },
  body: (
    a: Awaited<ReturnType<typeof joinInstances>> & { server: ReturnType<typeof server> },
    b: Awaited<ReturnType<typeof joinInstances>> & { server: ReturnType<typeof server> },
  ) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "anubis-cli-" });
  const at = (flag?: string) => flag?.replace("PATH", `${dir}/a.kv`);
  const options = { eventStore: at(flags.eventStore), sessionStore: at(flags.sessionStore) };
  const [serverA, serverB] = [server(), server()];
  const a = { ...await joinInstances(serverA, options), server: serverA };
  const b = { ...await joinInstances(serverB, options), server: serverB };
  try {
    await body(a, b);
  } finally {
    await a.leave();
    await b.leave();
    await Deno.remove(dir, { recursive: true });
  }
}

/** Resolves with the first change `a` hears from `b`. */
async function changeCrosses(a: { server: ReturnType<typeof server> }, b: typeof a) {
  const heard = new Promise((resolve) => a.server.notify.subscribe(resolve));
  b.server.notify.toolsListChanged();
  assert.deepEqual(await heard, { type: "tools_list_changed" });
}

Deno.test("serve http: --event-store kv alone joins the change bus, and no session bus", async () => {
  await withJoined({ eventStore: "kv:PATH" }, async (a, b) => {
    assert.equal(a.sessionBus, undefined, "no session can move: nothing to tell, no poller");
    await changeCrosses(a, b);
  });
});

Deno.test("serve http: --session-store kv alone joins the session bus and the change bus", async () => {
  await withJoined({ sessionStore: "kv:PATH" }, async (a, b) => {
    assert.ok(a.sessionBus && b.sessionBus);
    const signal = { type: "stream_opened" as const, sessionId: "s", order: 1 };
    const heard = new Promise((resolve) => a.sessionBus!.subscribe(resolve));
    b.sessionBus.publish(signal);
    assert.deepEqual(await heard, signal);
    await changeCrosses(a, b);
  });
});

Deno.test("serve http: no KV store, nothing joined", async () => {
  const joined = await joinInstances(server(), { eventStore: "memory" });
  assert.equal(joined.sessionBus, undefined);
  await joined.leave();
});

Deno.test("serve http: the stores and buses on one path share one KV handle", async () => {
  const databases = new KvDatabases();
  const opened: string[] = [];
  const open = databases.open.bind(databases);
  databases.open = (path) => (opened.push(path), open(path));
  const flags = { eventStore: "kv::memory:", sessionStore: "kv::memory:" };
  const stores = await openStores(flags, databases);
  const joined = await joinInstances(server(), flags, databases);
  try {
    assert.deepEqual(new Set(opened), new Set([":memory:"]));
    const kv = await databases.open(":memory:");
    // One in-memory database: what the session store writes, the handle holds.
    await stores.sessionStore!.save({
      v: 1,
      id: "s1",
      protocolVersion: "2025-11-25",
      clientInfo: { name: "c", version: "1" },
      clientCapabilities: {},
      initialized: true,
      subscriptions: [],
      assigns: {},
      updatedAt: Date.now(),
    }, 60_000);
    assert.ok((await Array.fromAsync(kv.list({ prefix: [] }))).length > 0);
  } finally {
    await joined.leave();
    stores.close();
    databases.close();
  }
});

Deno.test("serve http: a database that cannot be opened is one error naming the KV store", async () => {
  await assert.rejects(
    openStores({ sessionStore: "kv:/proc/anubis-no-such-dir/a.kv" }),
    /^Error: cannot open the KV store: /,
  );
  await assert.rejects(
    joinInstances(server(), { sessionStore: "kv:/proc/anubis-no-such-dir/a.kv" }),
    /^Error: cannot open the KV store: /,
  );
});

Deno.test("serve http: --task-store kv:PATH opens a KvTaskStore on that database", async () => {
  const dir = await Deno.makeTempDir();
  const stores = await openStores({ taskStore: `kv:${dir}/tasks.kv` });
  try {
    assert.ok(stores.taskStore instanceof KvTaskStore);
    assert.deepEqual((await stores.taskStore.list("nobody")).tasks, []);
  } finally {
    stores.close();
    await Deno.remove(dir, { recursive: true });
  }
  const memory = await openStores({ taskStore: "memory" });
  assert.equal(memory.taskStore, undefined); // the engine's own MemoryTaskStore
  memory.close();
});
