/**
 * Contract test suites that every `EventStore`, `SessionStore` and `TaskStore` package
 * runs. Runtime-neutral: each suite returns cases and the package registers
 * them with its test runner.
 *
 * @module
 */

import assert from "node:assert/strict";
import type { EventStore, SessionRecord, SessionStore, TaskRecord, TaskStore } from "@anubis/core";

/**
 * One test case.
 *
 * @example
 * ```ts
 * import type { ContractCase } from "@anubis/testing";
 * import assert from "node:assert/strict";
 * const c: ContractCase = { name: "noop", fn: () => Promise.resolve() };
 * assert.equal(await c.fn(), undefined);
 * ```
 */
export interface ContractCase {
  /** The case's name. */
  name: string;
  /** Runs the case; rejects on failure. */
  fn: () => Promise<void>;
}

/**
 * A fresh, isolated store for one case, and how to release it.
 *
 * @example
 * ```ts
 * import type { StoreFixture } from "@anubis/testing";
 * import assert from "node:assert/strict";
 * const fixture: StoreFixture<Map<string, string>> = { store: new Map() };
 * assert.equal(fixture.store.size, 0);
 * ```
 */
export interface StoreFixture<S> {
  /** The store. */
  store: S;
  /** Releases files or handles. */
  close?: () => Promise<void>;
}

/**
 * Creates a fresh store for one case.
 *
 * @example
 * ```ts
 * import type { StoreFactory } from "@anubis/testing";
 * import assert from "node:assert/strict";
 * const make: StoreFactory<Map<string, string>> = () => ({ store: new Map() });
 * assert.equal((await make()).store.size, 0);
 * ```
 */
export type StoreFactory<S> = () => StoreFixture<S> | Promise<StoreFixture<S>>;

function cases<S>(
  prefix: string,
  make: StoreFactory<S>,
  tests: Record<string, (store: S) => Promise<void>>,
) {
  return Object.entries(tests).map(([name, body]) => ({
    name: `${prefix}: ${name}`,
    fn: async () => {
      const fixture = await make();
      try {
        await body(fixture.store);
      } finally {
        await fixture.close?.();
      }
    },
  }));
}

/**
 * The `EventStore` contract of seed 002.
 *
 * @param make Creates a fresh store per case.
 * @returns The cases.
 *
 * @example
 * ```ts
 * import { eventStoreContract } from "@anubis/testing";
 * import assert from "node:assert/strict";
 * const cases = eventStoreContract(() => ({ store: null as never }));
 * assert.equal(cases.length > 5, true);
 * ```
 */
export function eventStoreContract(make: StoreFactory<EventStore>): ContractCase[] {
  return cases("event store", make, {
    "ids start at 1 and increase by one": async (store) => {
      assert.equal(await store.append("s", "a"), 1);
      assert.equal(await store.append("s", "b"), 2);
      assert.equal(await store.append("s", "c"), 3);
      assert.equal(await store.latestId("s"), 3);
    },
    "ids are per session": async (store) => {
      assert.equal(await store.append("a", "x"), 1);
      assert.equal(await store.append("b", "y"), 1);
      assert.equal(await store.latestId("unknown"), 0);
    },
    "replay returns the events after an id, in order, byte-exact": async (store) => {
      const data = ["one", "", "line\nbreak", "emoji 🎉", "x".repeat(200_000)];
      for (const d of data) await store.append("s", d);
      assert.deepEqual(await store.replay("s", 0), data.map((d, i) => ({ id: i + 1, data: d })));
      assert.deepEqual((await store.replay("s", 3)).map((e) => e.id), [4, 5]);
      assert.deepEqual(await store.replay("s", 5), []);
      assert.deepEqual(await store.replay("nobody", 0), []);
    },
    "a session never replays another session's events": async (store) => {
      const ids = ["a", "a:1", "ab", "a/b", "a\u0000b", ""];
      for (const id of ids) await store.append(id, `from ${JSON.stringify(id)}`);
      for (const id of ids) {
        assert.deepEqual(await store.replay(id, 0), [{
          id: 1,
          data: `from ${JSON.stringify(id)}`,
        }]);
      }
    },
    "delete drops one session's events, idempotently": async (store) => {
      await store.append("a", "1");
      await store.append("b", "1");
      await store.delete("a");
      await store.delete("a");
      await store.delete("never");
      assert.deepEqual(await store.replay("a", 0), []);
      assert.equal(await store.latestId("a"), 0);
      assert.deepEqual(await store.replay("b", 0), [{ id: 1, data: "1" }]);
    },
    "heartbeats (when the store has them) change with every beat, per owner": async (store) => {
      if (!store.heartbeat || !store.lastHeartbeat) {
        assert.equal(store.lastHeartbeat, store.heartbeat, "both or neither");
        return;
      }
      assert.equal(await store.lastHeartbeat("a"), undefined);
      await store.heartbeat("a");
      const first = await store.lastHeartbeat("a");
      assert.notEqual(first, undefined);
      assert.equal(await store.lastHeartbeat("a"), first, "reading does not beat");
      assert.equal(await store.lastHeartbeat("b"), undefined, "another owner's beats are not b's");
      await store.heartbeat("a");
      assert.notEqual(await store.lastHeartbeat("a"), first);
      await store.append("a", "x"); // owners and sessions do not meet
      assert.deepEqual(await store.replay("a", 0), [{ id: 1, data: "x" }]);
    },
    "concurrent appends get every id once, with no gap": async (store) => {
      const ids = await Promise.all(
        Array.from({ length: 200 }, (_, i) => store.append("s", `e${i}`)),
      );
      assert.deepEqual(
        [...ids].sort((x, y) => x - y),
        Array.from({ length: 200 }, (_, i) => i + 1),
      );
      const replayed = await store.replay("s", 0);
      assert.equal(replayed.length, 200);
      for (const event of replayed) assert.equal(event.data, `e${ids.indexOf(event.id)}`);
    },
  });
}

function record(id: string, assigns: SessionRecord["assigns"] = {}): SessionRecord {
  return {
    v: 1,
    id,
    protocolVersion: "2025-11-25",
    clientInfo: { name: "client", version: "1.0.0" },
    clientCapabilities: { sampling: {} },
    initialized: true,
    logLevel: "info",
    subscriptions: ["test://a"],
    assigns,
    updatedAt: 1,
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The `SessionStore` contract.
 *
 * @param make Creates a fresh store per case.
 * @returns The cases.
 *
 * @example
 * ```ts
 * import { sessionStoreContract } from "@anubis/testing";
 * import assert from "node:assert/strict";
 * const cases = sessionStoreContract(() => ({ store: null as never }));
 * assert.equal(cases.length > 3, true);
 * ```
 */
export function sessionStoreContract(make: StoreFactory<SessionStore>): ContractCase[] {
  return cases("session store", make, {
    "save then load returns the same record": async (store) => {
      const saved = record("s1", { user: { id: 7, tags: ["a", "ü"] }, big: "x".repeat(20_000) });
      await store.save(saved, 60_000);
      assert.deepEqual(await store.load("s1"), saved);
      assert.equal(await store.load("unknown"), undefined);
    },
    "save overwrites and records are isolated by id": async (store) => {
      await store.save(record("a", { n: 1 }), 60_000);
      await store.save(record("b", { n: 2 }), 60_000);
      await store.save(record("a", { n: 3 }), 60_000);
      assert.deepEqual((await store.load("a"))?.assigns, { n: 3 });
      assert.deepEqual((await store.load("b"))?.assigns, { n: 2 });
    },
    "records expire, and touch extends them": async (store) => {
      // Touched right away, so a slow machine cannot let "kept" lapse first;
      // the sleep only has to outlast the 300 ms, never to fit under a bound.
      await store.save(record("gone"), 300);
      await store.save(record("kept"), 300);
      await store.touch("kept", 10_000);
      await store.touch("unknown", 10_000);
      await sleep(450);
      assert.equal(await store.load("gone"), undefined);
      assert.equal((await store.load("kept"))?.id, "kept");
    },
    "delete is idempotent": async (store) => {
      await store.save(record("d"), 60_000);
      await store.delete("d");
      await store.delete("d");
      assert.equal(await store.load("d"), undefined);
    },
  });
}

function task(id: string, owner = "owner", ttlMs: number | null = 60_000): TaskRecord {
  const now = Date.now();
  return {
    v: 1,
    id,
    owner,
    method: "tools/call",
    status: "working",
    statusMessage: "started",
    createdAt: now,
    updatedAt: now,
    ttlMs,
    expiresAt: ttlMs === null ? null : now + ttlMs,
    pollIntervalMs: 500,
  };
}

/**
 * The `TaskStore` contract: a task is stored before `create` resolves, an
 * outcome is written once, terminal tasks never move, owners see only their
 * own tasks, expired tasks are gone, and values survive as JSON.
 *
 * @param make Creates a fresh store per case.
 * @returns The cases.
 *
 * @example
 * ```ts
 * import { MemoryTaskStore } from "@anubis/core";
 * import { taskStoreContract } from "@anubis/testing";
 * const cases = taskStoreContract(() => ({ store: new MemoryTaskStore() }));
 * for (const c of cases) await c.fn(); // rejects on the first broken rule
 * if (cases.length < 8) throw new Error("too few cases");
 * ```
 */
export function taskStoreContract(make: StoreFactory<TaskStore>): ContractCase[] {
  return cases("task store", make, {
    "create then get returns an equal copy": async (store) => {
      const record = task("t1");
      record.inputKeys = ["ü", "emoji 🎉"];
      await store.create(record);
      const read = await store.get("t1");
      assert.deepEqual(read, record);
      assert.deepEqual(JSON.parse(JSON.stringify(read)), record);
      read!.status = "failed";
      assert.equal((await store.get("t1"))?.status, "working");
      assert.equal(await store.get("unknown"), undefined);
    },
    "create rejects an id it holds": async (store) => {
      await store.create(task("t1"));
      await assert.rejects(store.create(task("t1", "someone else")));
      assert.equal((await store.get("t1"))?.owner, "owner");
    },
    "concurrent creations of one id: exactly one wins": async (store) => {
      const owners = ["a", "b", "c", "d"];
      const made = await Promise.allSettled(owners.map((o) => store.create(task("t1", o))));
      const won = made.flatMap((m, i) => m.status === "fulfilled" ? [owners[i]] : []);
      assert.equal(won.length, 1);
      assert.equal((await store.get("t1"))?.owner, won[0]);
      assert.deepEqual((await store.list(won[0])).tasks.map((t) => t.id), ["t1"]);
    },
    "create replaces an expired task of the same id": async (store) => {
      await store.create(task("t1", "old", 30));
      await new Promise((resolve) => setTimeout(resolve, 60));
      await store.create(task("t1", "new"));
      assert.equal((await store.get("t1"))?.owner, "new");
      await assert.rejects(store.create(task("t1", "third")));
    },
    "an outcome is written once, and a terminal task never moves": async (store) => {
      await store.create(task("t1"));
      const result = { content: [{ type: "text", text: "x".repeat(20_000) }] };
      const done = await store.finish("t1", { status: "completed", result });
      assert.equal(done?.status, "completed");
      assert.deepEqual(done?.result, result);
      const late = await store.finish("t1", {
        status: "failed",
        error: { code: -32603, message: "late" },
      });
      assert.equal(late?.status, "completed");
      assert.equal(late?.error, undefined);
      const moved = await store.update("t1", { status: "working", statusMessage: "again" });
      assert.equal(moved?.status, "completed");
      const read = await store.get("t1");
      assert.equal(read?.status, "completed");
      assert.deepEqual(read?.result, result);
      assert.equal(read?.statusMessage, "started");
    },
    "concurrent outcomes: exactly one wins, and every caller sees it": async (store) => {
      await store.create(task("t1"));
      const ends = await Promise.all(
        Array.from(
          { length: 20 },
          (_, i) =>
            store.finish(
              "t1",
              i % 2 ? { status: "cancelled" } : { status: "completed", result: { n: i } },
            ),
        ),
      );
      const stored = await store.get("t1");
      for (const end of ends) {
        assert.equal(end?.status, stored?.status);
        assert.deepEqual(end?.result, stored?.result);
      }
    },
    "update changes status, replaces requests, merges answers, keeps keys": async (store) => {
      await store.create(task("t1"));
      const asked = await store.update("t1", {
        status: "input_required",
        inputRequests: { a: { method: "elicitation/create" } },
        inputKeys: ["a"],
      });
      assert.equal(asked?.status, "input_required");
      assert.deepEqual(asked?.inputRequests, { a: { method: "elicitation/create" } });
      await store.update("t1", { inputResponses: { a: { action: "accept" }, b: 1 } });
      const answered = await store.update("t1", {
        status: "working",
        inputRequests: null,
        inputResponses: { b: null },
        inputKeys: ["a", "c"],
      });
      assert.equal(answered?.status, "working");
      assert.equal(answered?.inputRequests, undefined);
      assert.deepEqual(answered?.inputResponses, { a: { action: "accept" } });
      assert.deepEqual(answered?.inputKeys, ["a", "c"]);
      assert.deepEqual(await store.get("t1"), answered);
    },
    "the lease is kept and replaced": async (store) => {
      await store.create(task("t1"));
      const lease = { holder: "instance-a", expiresAt: Date.now() + 5_000 };
      assert.deepEqual((await store.update("t1", { lease }))?.lease, lease);
      const renewed = { holder: "instance-a", expiresAt: lease.expiresAt + 5_000 };
      await store.update("t1", { lease: renewed });
      assert.deepEqual((await store.get("t1"))?.lease, renewed);
    },
    "unknown ids: undefined, and delete is idempotent": async (store) => {
      assert.equal(await store.update("nope", { status: "working" }), undefined);
      assert.equal(await store.finish("nope", { status: "cancelled" }), undefined);
      await store.create(task("t1"));
      await store.delete("t1");
      await store.delete("t1");
      await store.delete("never");
      assert.equal(await store.get("t1"), undefined);
      assert.deepEqual((await store.list("owner")).tasks, []);
    },
    "list shows only the owner's tasks, oldest first, page by page": async (store) => {
      const mine: string[] = [];
      for (let i = 0; i < 7; i++) {
        await store.create(task(`mine-${i}`, "me"));
        mine.push(`mine-${i}`);
        await store.create(task(`theirs-${i}`, i % 2 ? "them" : "me:other"));
      }
      const seen: string[] = [];
      let cursor: string | undefined;
      for (let pages = 0; pages < 10; pages++) {
        const page: { tasks: TaskRecord[]; nextCursor?: string } = await store.list("me", {
          cursor,
          limit: 3,
        });
        assert.ok(page.tasks.length <= 3);
        for (const t of page.tasks) assert.equal(t.owner, "me");
        seen.push(...page.tasks.map((t) => t.id));
        cursor = page.nextCursor;
        if (cursor === undefined) break;
      }
      assert.deepEqual(seen, mine);
      assert.deepEqual((await store.list("nobody")).tasks, []);
    },
    "an invalid cursor rejects": async (store) => {
      await store.create(task("t1"));
      await assert.rejects(store.list("owner", { cursor: "not-a-cursor-\u0000" }));
    },
    "expired tasks are gone; unlimited ones stay": async (store) => {
      await store.create(task("short", "owner", 300));
      await store.create(task("forever", "owner", null));
      await sleep(450);
      assert.equal(await store.get("short"), undefined);
      assert.equal(await store.update("short", { status: "working" }), undefined);
      assert.equal(await store.finish("short", { status: "cancelled" }), undefined);
      assert.deepEqual((await store.list("owner")).tasks.map((t) => t.id), ["forever"]);
      await store.create(task("short", "owner", 60_000));
      assert.equal((await store.get("short"))?.status, "working");
    },
  });
}
