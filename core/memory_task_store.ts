/**
 * The default {@link TaskStore}: bounded, in memory, for one instance.
 *
 * @module
 */

import {
  applyTaskOutcome,
  applyTaskPatch,
  callerOf,
  isTerminal,
  TaskLimitError,
  type TaskOutcome,
  type TaskPage,
  type TaskPatch,
  type TaskRecord,
  type TaskStore,
} from "./task_store.ts";

/**
 * Options of a {@link MemoryTaskStore}.
 *
 * @example
 * ```ts
 * import { MemoryTaskStore, type MemoryTaskStoreOptions } from "@anubis/core";
 * const options: MemoryTaskStoreOptions = { maxTasks: 100 };
 * const store = new MemoryTaskStore(options);
 * if (store.size !== 0) throw new Error("not empty");
 * ```
 */
export interface MemoryTaskStoreOptions {
  /**
   * The most tasks kept (default 10 000), whatever their status. When full,
   * expired tasks go first (a full store looks for them at most once a
   * second), then the oldest terminal ones; a store full of running tasks
   * refuses new ones with a {@link TaskLimitError} (`scope: "total"`).
   */
  maxTasks?: number;
  /**
   * The most tasks one caller (a task's `caller`, else its `owner`: a
   * session, a principal) may hold at once, whatever their status (default
   * a tenth of `maxTasks`, at least 1), so one caller cannot fill the store
   * for everyone: its terminal tasks count until they expire or are
   * deleted. A caller at its share makes room from its own expired tasks,
   * else is refused with a {@link TaskLimitError} (`scope: "caller"`).
   */
  maxTasksPerCaller?: number;
}

/** How often a full store may look through every task for expired ones, in ms. */
const SWEEP_MS = 1_000;

interface Entry {
  record: TaskRecord;
  seq: number;
}

/**
 * Keeps tasks in a `Map`, bounded in count, with expiry checked on every read.
 * Values are stored and returned as copies.
 *
 * @example
 * ```ts
 * import { MemoryTaskStore } from "@anubis/core";
 * const store = new MemoryTaskStore({ maxTasks: 2, maxTasksPerCaller: 2 });
 * const now = Date.now();
 * for (const id of ["a", "b"]) {
 *   await store.create({
 *     v: 1, id, owner: "o", method: "tools/call", status: "working",
 *     createdAt: now, updatedAt: now, ttlMs: null, expiresAt: null,
 *   });
 * }
 * const page = await store.list("o", { limit: 1 });
 * if (page.tasks[0].id !== "a" || page.nextCursor === undefined) throw new Error("wrong page");
 * const rest = await store.list("o", { cursor: page.nextCursor });
 * if (rest.tasks[0].id !== "b" || rest.nextCursor !== undefined) throw new Error("wrong page");
 * ```
 */
export class MemoryTaskStore implements TaskStore {
  readonly #max: number;
  readonly #maxPerCaller: number;
  readonly #tasks = new Map<string, Entry>();
  readonly #owners = new Map<string, Set<string>>();
  // The ids each caller holds, oldest first (its share of the bound).
  readonly #callers = new Map<string, Set<string>>();
  #seq = 0;
  /** No task expires before this (a lower bound: the earliest expiry created since the last sweep). */
  #nextExpiry = Infinity;
  #lastSweep = -Infinity;

  /**
   * Creates an empty store.
   *
   * @param options The bounds.
   */
  constructor(options: MemoryTaskStoreOptions = {}) {
    this.#max = options.maxTasks ?? 10_000;
    this.#maxPerCaller = options.maxTasksPerCaller ?? Math.max(1, Math.ceil(this.#max / 10));
  }

  /**
   * How many tasks the store holds (expired ones not yet reclaimed included).
   *
   * @example
   * ```ts
   * import { MemoryTaskStore } from "@anubis/core";
   * if (new MemoryTaskStore().size !== 0) throw new Error("not empty");
   * ```
   */
  get size(): number {
    return this.#tasks.size;
  }

  /**
   * How many tasks a caller holds (its share used; expired ones not yet
   * reclaimed included).
   *
   * @param caller The caller (a task's `caller`, else its `owner`).
   * @returns The count.
   *
   * @example
   * ```ts
   * import { MemoryTaskStore } from "@anubis/core";
   * import assert from "node:assert/strict";
   * const store = new MemoryTaskStore();
   * await store.create({
   *   v: 1, id: "t", owner: "session:a", method: "tools/call", status: "working",
   *   createdAt: 0, updatedAt: 0, ttlMs: null, expiresAt: null,
   * });
   * assert.equal(store.heldBy("session:a"), 1);
   * assert.equal(store.heldBy("session:b"), 0);
   * ```
   */
  heldBy(caller: string): number {
    return this.#callers.get(caller)?.size ?? 0;
  }

  /**
   * Stores a new task.
   *
   * @param record The task.
   * @throws When the id exists; a {@link TaskLimitError} when its caller
   * holds its share, or the store is full of running tasks.
   *
   * @example
   * ```ts
   * import { MemoryTaskStore } from "@anubis/core";
   * const store = new MemoryTaskStore();
   * const record = {
   *   v: 1 as const, id: "t", owner: "o", method: "tools/call", status: "working" as const,
   *   createdAt: 0, updatedAt: 0, ttlMs: null, expiresAt: null,
   * };
   * await store.create(record);
   * const twice = await store.create(record).then(() => false, () => true);
   * if (!twice) throw new Error("a duplicate id was accepted");
   * ```
   */
  create(record: TaskRecord): Promise<void> {
    if (this.#live(record.id)) return Promise.reject(new Error(`Task ${record.id} exists`));
    const caller = callerOf(record);
    const held = this.#callers.get(caller);
    if (held && held.size >= this.#maxPerCaller && !this.#reclaimExpired(held)) {
      return Promise.reject(new TaskLimitError("caller", this.#maxPerCaller));
    }
    if (this.#tasks.size >= this.#max) this.#reclaim();
    if (this.#tasks.size >= this.#max) {
      return Promise.reject(new TaskLimitError("total", this.#max));
    }
    this.#tasks.set(record.id, { record: structuredClone(record), seq: ++this.#seq });
    if (record.expiresAt !== null) this.#nextExpiry = Math.min(this.#nextExpiry, record.expiresAt);
    indexed(this.#owners, record.owner).add(record.id);
    indexed(this.#callers, caller).add(record.id);
    return Promise.resolve();
  }

  /**
   * Reads a task.
   *
   * @param id The task id.
   * @returns A copy, or `undefined` when unknown or expired.
   *
   * @example
   * ```ts
   * import { MemoryTaskStore } from "@anubis/core";
   * if (await new MemoryTaskStore().get("nope") !== undefined) throw new Error("found");
   * ```
   */
  get(id: string): Promise<TaskRecord | undefined> {
    const entry = this.#live(id);
    return Promise.resolve(entry && structuredClone(entry.record));
  }

  /**
   * Changes a task that is not terminal.
   *
   * @param id The task id.
   * @param patch The change.
   * @returns The record afterwards, or `undefined` for an unknown id.
   *
   * @example
   * ```ts
   * import { MemoryTaskStore } from "@anubis/core";
   * const store = new MemoryTaskStore();
   * await store.create({
   *   v: 1, id: "t", owner: "o", method: "tools/call", status: "working",
   *   createdAt: 0, updatedAt: 0, ttlMs: null, expiresAt: null,
   * });
   * const next = await store.update("t", { status: "input_required" });
   * if (next?.status !== "input_required") throw new Error("not updated");
   * ```
   */
  update(id: string, patch: TaskPatch): Promise<TaskRecord | undefined> {
    const entry = this.#live(id);
    if (!entry) return Promise.resolve(undefined);
    entry.record = applyTaskPatch(entry.record, structuredClone(patch), Date.now());
    return Promise.resolve(structuredClone(entry.record));
  }

  /**
   * Ends a task once.
   *
   * @param id The task id.
   * @param outcome How it ended.
   * @returns The record afterwards, or `undefined` for an unknown id.
   *
   * @example
   * ```ts
   * import { MemoryTaskStore } from "@anubis/core";
   * const store = new MemoryTaskStore();
   * await store.create({
   *   v: 1, id: "t", owner: "o", method: "tools/call", status: "working",
   *   createdAt: 0, updatedAt: 0, ttlMs: null, expiresAt: null,
   * });
   * await store.finish("t", { status: "cancelled" });
   * const late = await store.finish("t", { status: "completed", result: { content: [] } });
   * if (late?.status !== "cancelled" || late.result) throw new Error("overwritten");
   * ```
   */
  finish(id: string, outcome: TaskOutcome): Promise<TaskRecord | undefined> {
    const entry = this.#live(id);
    if (!entry) return Promise.resolve(undefined);
    entry.record = applyTaskOutcome(entry.record, structuredClone(outcome), Date.now());
    return Promise.resolve(structuredClone(entry.record));
  }

  /**
   * One page of an owner's live tasks, oldest first.
   *
   * @param owner The owner.
   * @param options The cursor and page size (default 50).
   * @returns The page.
   * @throws When the cursor is not one this store gave.
   *
   * @example
   * ```ts
   * import { MemoryTaskStore } from "@anubis/core";
   * const page = await new MemoryTaskStore().list("nobody");
   * if (page.tasks.length !== 0 || page.nextCursor !== undefined) throw new Error("not empty");
   * ```
   */
  list(owner: string, options: { cursor?: string; limit?: number } = {}): Promise<TaskPage> {
    const limit = Math.max(1, options.limit ?? 50);
    let after = 0;
    if (options.cursor !== undefined) {
      after = /^[1-9][0-9]*$/.test(options.cursor) ? Number(options.cursor) : NaN;
      if (!Number.isSafeInteger(after)) return Promise.reject(new Error("Invalid cursor"));
    }
    const tasks: TaskRecord[] = [];
    let last = 0;
    let more = false;
    for (const id of this.#owners.get(owner) ?? []) {
      const entry = this.#live(id);
      if (!entry || entry.seq <= after) continue;
      if (tasks.length === limit) {
        more = true;
        break;
      }
      tasks.push(structuredClone(entry.record));
      last = entry.seq;
    }
    return Promise.resolve(more ? { tasks, nextCursor: String(last) } : { tasks });
  }

  /**
   * Forgets a task. Idempotent.
   *
   * @param id The task id.
   *
   * @example
   * ```ts
   * import { MemoryTaskStore } from "@anubis/core";
   * const store = new MemoryTaskStore();
   * await store.delete("never-existed");
   * if (store.size !== 0) throw new Error("not empty");
   * ```
   */
  delete(id: string): Promise<void> {
    this.#drop(id);
    return Promise.resolve();
  }

  /** The entry of a live task; an expired one is reclaimed on sight. */
  #live(id: string): Entry | undefined {
    const entry = this.#tasks.get(id);
    if (!entry) return undefined;
    const expiresAt = entry.record.expiresAt;
    if (expiresAt !== null && expiresAt <= Date.now()) {
      this.#drop(id);
      return undefined;
    }
    return entry;
  }

  #drop(id: string): void {
    const entry = this.#tasks.get(id);
    if (!entry) return;
    this.#tasks.delete(id);
    unindex(this.#owners, entry.record.owner, id);
    unindex(this.#callers, callerOf(entry.record), id);
  }

  /**
   * Makes room in a caller's share: drops its first expired task (oldest
   * first); `false` when none expired. Its terminal tasks count until they
   * expire or are deleted.
   */
  #reclaimExpired(held: Set<string>): boolean {
    const now = Date.now();
    if (now < this.#nextExpiry) return false; // none can have expired
    for (const id of held) {
      const expiresAt = this.#tasks.get(id)!.record.expiresAt;
      if (expiresAt !== null && expiresAt <= now) {
        this.#drop(id);
        return true;
      }
    }
    return false;
  }

  /**
   * Makes room: every expired task, else the oldest task that is terminal (or
   * expired). The look through every task runs only when one may have
   * expired, at most once per `SWEEP_MS`; otherwise the oldest tasks are
   * usually finished ones, so making room costs a step or a few, not the
   * whole store.
   */
  #reclaim(): void {
    const now = Date.now();
    if (now >= this.#nextExpiry && now - this.#lastSweep >= SWEEP_MS) {
      this.#lastSweep = now;
      this.#nextExpiry = Infinity;
      for (const [id, { record }] of this.#tasks) {
        if (record.expiresAt === null) continue;
        if (record.expiresAt <= now) this.#drop(id);
        else this.#nextExpiry = Math.min(this.#nextExpiry, record.expiresAt);
      }
      if (this.#tasks.size < this.#max) return;
    }
    for (const [id, { record }] of this.#tasks) {
      const expired = record.expiresAt !== null && record.expiresAt <= now;
      if (expired || isTerminal(record.status)) return this.#drop(id);
    }
  }
}

/** The set of a key in an index, made on first use. */
function indexed(index: Map<string, Set<string>>, key: string): Set<string> {
  let ids = index.get(key);
  if (!ids) index.set(key, ids = new Set());
  return ids;
}

/** Takes an id out of an index, and its key once it holds none. */
function unindex(index: Map<string, Set<string>>, key: string, id: string): void {
  const ids = index.get(key);
  ids?.delete(id);
  if (ids?.size === 0) index.delete(key);
}
