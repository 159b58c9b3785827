/**
 * A Deno KV {@link TaskStore}: tasks every instance sharing the database can
 * answer for, kept as JSON bytes so Deno and Node share them.
 *
 * @module
 */

import type {
  TaskLease,
  TaskOutcome,
  TaskPage,
  TaskPatch,
  TaskRecord,
  TaskStatus,
  TaskStore,
} from "@anubis/core";
import { TaskLimitError } from "@anubis/core";
import { applyTaskOutcome, applyTaskPatch, callerOf, isTerminal } from "@anubis/core/engine";
import {
  backoff,
  chunkWrites,
  type KvKey,
  type KvKeyPart,
  type KvLike,
  MAX_PARTS_PER_COMMIT,
  readChunked,
  readHead,
  retryLocked,
} from "@anubis/core/kv";

/**
 * Options of a {@link KvTaskStore}.
 *
 * @example
 * ```ts
 * import type { KvTaskStoreOptions } from "@anubis/session-kv";
 * const options: KvTaskStoreOptions = { prefix: ["app", "tasks"], retryTimeoutMs: 5_000 };
 * if (options.prefix?.length !== 2) throw new Error("wrong prefix");
 * ```
 */
export interface KvTaskStoreOptions {
  /** Key prefix (default `["anubis", "tasks"]`). */
  prefix?: readonly KvKeyPart[];
  /** How long to retry "database is locked" and lost races before failing, in ms (default 10,000). */
  retryTimeoutMs?: number;
  /**
   * The most live tasks this store (this instance) creates and keeps at once,
   * whatever their status (default 10 000): a `create` beyond it is refused
   * with a `TaskLimitError` (`scope: "total"`). Tasks leave the count when they
   * expire or are deleted. Counted per instance: N instances sharing a
   * database keep at most N times this.
   */
  maxTasks?: number;
  /**
   * The most live tasks one caller (a task's `caller`, else its `owner`) may
   * hold in this store (default a tenth of `maxTasks`): beyond it a `create`
   * is refused with a `TaskLimitError` (`scope: "caller"`), and other callers
   * are not affected.
   */
  maxTasksPerCaller?: number;
}

interface Header {
  expiresAt: number | null;
}

/** A task this store created and counts: whose it is, and when it leaves the count. */
interface Counted {
  caller: string;
  expiresAt: number | null;
}

/**
 * How often a store at a bound may look through its count for expired tasks,
 * in ms (a look is at most `maxTasks` steps, so at most ten a second).
 */
const SWEEP_MS = 100;
/** How many leases one `renew` commit writes (a commit holds at most 100 checks). */
const RENEW_BATCH = 50;

const encoder = new TextEncoder();
const decoder = new TextDecoder();
// Unlimited tasks still go some day: a year, re-armed on every write.
const FOREVER_MS = 365 * 24 * 60 * 60_000;

/**
 * Keeps tasks in Deno KV (any `Deno.Kv`-shaped object): every write is an
 * atomic check-and-set on the task's versionstamp, so an outcome is written
 * once even when instances race; expired tasks are filtered on read and
 * reclaimed by KV's `expireIn`.
 *
 * @example
 * ```ts
 * import { KvTaskStore } from "@anubis/session-kv";
 * const kv = await Deno.openKv(":memory:");
 * const store = new KvTaskStore(kv);
 * const now = Date.now();
 * await store.create({
 *   v: 1, id: "t1", owner: "o", method: "tools/call", status: "working",
 *   createdAt: now, updatedAt: now, ttlMs: 60_000, expiresAt: now + 60_000,
 * });
 * await store.finish("t1", { status: "completed", result: { content: [] } });
 * const late = await store.finish("t1", { status: "cancelled" });
 * if (late?.status !== "completed") throw new Error("overwritten");
 * kv.close();
 * ```
 */
export class KvTaskStore implements TaskStore {
  readonly #kv: KvLike;
  readonly #prefix: readonly KvKeyPart[];
  readonly #retryMs: number;
  readonly #max: number;
  readonly #maxPerCaller: number;
  // The live tasks this store created (its bounds), and how many each caller holds.
  readonly #counted = new Map<string, Counted>();
  readonly #callers = new Map<string, number>();
  #lastSweep = -Infinity;

  /**
   * Creates a store on a database the caller owns (and closes).
   *
   * @param kv The database.
   * @param options Prefix, retry bound and task bounds.
   */
  constructor(kv: KvLike, options: KvTaskStoreOptions = {}) {
    this.#kv = kv;
    this.#prefix = options.prefix ?? ["anubis", "tasks"];
    this.#retryMs = options.retryTimeoutMs ?? 10_000;
    this.#max = options.maxTasks ?? 10_000;
    this.#maxPerCaller = options.maxTasksPerCaller ?? Math.max(1, Math.ceil(this.#max / 10));
  }

  /**
   * How many live tasks this store created and counts (expired ones not yet
   * swept included).
   *
   * @example
   * ```ts
   * import { KvTaskStore } from "@anubis/session-kv";
   * import assert from "node:assert/strict";
   * const kv = await Deno.openKv(":memory:");
   * const store = new KvTaskStore(kv);
   * assert.equal(store.size, 0);
   * kv.close();
   * ```
   */
  get size(): number {
    return this.#counted.size;
  }

  /**
   * How many live tasks a caller holds in this store's count.
   *
   * @param caller The caller (a task's `caller`, else its `owner`).
   * @returns The count.
   *
   * @example
   * ```ts
   * import { KvTaskStore } from "@anubis/session-kv";
   * import assert from "node:assert/strict";
   * const kv = await Deno.openKv(":memory:");
   * const store = new KvTaskStore(kv, { maxTasksPerCaller: 1 });
   * const task = (id: string) => ({
   *   v: 1 as const, id, owner: "session:a", method: "tools/call", status: "working" as const,
   *   createdAt: 0, updatedAt: 0, ttlMs: null, expiresAt: null,
   * });
   * await store.create(task("t1"));
   * assert.equal(store.heldBy("session:a"), 1);
   * await assert.rejects(store.create(task("t2")), /Too many tasks/);
   * kv.close();
   * ```
   */
  heldBy(caller: string): number {
    return this.#callers.get(caller) ?? 0;
  }

  /**
   * Stores a new task (an expired one of the same id is replaced).
   *
   * @param record The task.
   * @throws When the id exists; a `TaskLimitError` when its caller holds its
   * share, or the store holds `maxTasks`.
   *
   * @example
   * ```ts
   * import { KvTaskStore } from "@anubis/session-kv";
   * const kv = await Deno.openKv(":memory:");
   * const store = new KvTaskStore(kv);
   * const record = {
   *   v: 1 as const, id: "t", owner: "o", method: "tools/call", status: "working" as const,
   *   createdAt: 0, updatedAt: 0, ttlMs: null, expiresAt: null,
   * };
   * await store.create(record);
   * if (await store.create(record).then(() => true, () => false)) throw new Error("twice");
   * kv.close();
   * ```
   */
  async create(record: TaskRecord): Promise<void> {
    const id = record.id;
    const caller = callerOf(record);
    // Counted before the write, so concurrent creations cannot pass a bound.
    this.#admit(id, caller);
    this.#counted.set(id, { caller, expiresAt: record.expiresAt });
    this.#callers.set(caller, this.heldBy(caller) + 1);
    try {
      const made = await this.#write(id, (current) => {
        if (current) throw new Error(`Task ${id} exists`);
        return record;
      }, true);
      if (!made) throw new Error(`Task ${id} was not stored`);
    } catch (error) {
      this.#uncount(id);
      throw error;
    }
  }

  /** Refuses a creation past a bound (after sweeping expired tasks from the count). */
  #admit(id: string, caller: string): void {
    const known = this.#counted.get(id);
    if (known && (known.expiresAt === null || known.expiresAt > Date.now())) {
      throw new Error(`Task ${id} exists`);
    }
    // An expired task of the id is replaced: counted anew.
    this.#uncount(id);
    const full = () => this.#counted.size >= this.#max;
    const held = () => this.heldBy(caller) >= this.#maxPerCaller;
    if (!full() && !held()) return;
    const now = Date.now();
    if (now - this.#lastSweep >= SWEEP_MS) {
      this.#lastSweep = now;
      for (const [counted, { expiresAt }] of this.#counted) {
        if (expiresAt !== null && expiresAt <= now) this.#uncount(counted);
      }
    }
    if (held()) throw new TaskLimitError("caller", this.#maxPerCaller);
    if (full()) throw new TaskLimitError("total", this.#max);
  }

  /** Takes a task out of the count. */
  #uncount(id: string): void {
    const counted = this.#counted.get(id);
    if (!counted) return;
    this.#counted.delete(id);
    const held = this.heldBy(counted.caller) - 1;
    if (held > 0) this.#callers.set(counted.caller, held);
    else this.#callers.delete(counted.caller);
  }

  /**
   * Reads a task.
   *
   * @param id The task id.
   * @returns The task, or `undefined` when unknown or expired.
   *
   * @example
   * ```ts
   * import { KvTaskStore } from "@anubis/session-kv";
   * const kv = await Deno.openKv(":memory:");
   * if (await new KvTaskStore(kv).get("nope") !== undefined) throw new Error("found");
   * kv.close();
   * ```
   */
  async get(id: string): Promise<TaskRecord | undefined> {
    return (await this.#read(id))?.record;
  }

  /**
   * Changes a task that is not terminal.
   *
   * @param id The task id.
   * @param patch The change.
   * @returns The task afterwards, or `undefined` for an unknown id.
   *
   * @example
   * ```ts
   * import { KvTaskStore } from "@anubis/session-kv";
   * const kv = await Deno.openKv(":memory:");
   * if (await new KvTaskStore(kv).update("nope", {}) !== undefined) throw new Error("found");
   * kv.close();
   * ```
   */
  update(id: string, patch: TaskPatch): Promise<TaskRecord | undefined> {
    return this.#write(id, (current) => current && applyTaskPatch(current, patch, Date.now()));
  }

  /**
   * Ends a task once: the first outcome stored wins.
   *
   * @param id The task id.
   * @param outcome How it ended.
   * @returns The task afterwards, or `undefined` for an unknown id.
   *
   * @example
   * ```ts
   * import { KvTaskStore } from "@anubis/session-kv";
   * const kv = await Deno.openKv(":memory:");
   * const ended = await new KvTaskStore(kv).finish("nope", { status: "cancelled" });
   * if (ended !== undefined) throw new Error("found");
   * kv.close();
   * ```
   */
  finish(id: string, outcome: TaskOutcome): Promise<TaskRecord | undefined> {
    return this.#write(id, (current) => current && applyTaskOutcome(current, outcome, Date.now()));
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
   * import { KvTaskStore } from "@anubis/session-kv";
   * const kv = await Deno.openKv(":memory:");
   * const page = await new KvTaskStore(kv).list("nobody");
   * if (page.tasks.length !== 0) throw new Error("not empty");
   * kv.close();
   * ```
   */
  async list(owner: string, options: { cursor?: string; limit?: number } = {}): Promise<TaskPage> {
    const limit = Math.max(1, options.limit ?? 50);
    const prefix = [...this.#prefix, "owner", owner];
    let start: KvKey | undefined;
    if (options.cursor !== undefined) {
      const [createdAt, id] = decodeCursor(options.cursor);
      start = [...prefix, createdAt, `${id}\u0000`];
    }
    const tasks: TaskRecord[] = [];
    let more = false;
    const entries = this.#kv.list(start ? { prefix, start } : { prefix });
    for await (const entry of entries) {
      const [createdAt, id] = entry.key.slice(prefix.length) as [number, string];
      const record = await this.get(id);
      if (!record || record.owner !== owner || record.createdAt !== createdAt) continue;
      if (tasks.length === limit) {
        more = true;
        break;
      }
      tasks.push(record);
    }
    if (!more) return { tasks };
    const last = tasks[tasks.length - 1];
    return { tasks, nextCursor: btoa(JSON.stringify([last.createdAt, last.id])) };
  }

  /**
   * Renews the leases of running tasks in one commit per call (one checked
   * write per task, where `update` commits each alone): the runtime's lease
   * sweep. A task whose record spans several entries, or a commit that lost
   * a race, falls back to `update` one by one.
   *
   * @param ids The tasks (at most 50 are written per commit).
   * @param lease The new lease.
   * @returns For each id, its status afterwards (`undefined`: unknown or expired).
   *
   * @example
   * ```ts
   * import { KvTaskStore } from "@anubis/session-kv";
   * import assert from "node:assert/strict";
   * const kv = await Deno.openKv(":memory:");
   * const store = new KvTaskStore(kv);
   * await store.create({
   *   v: 1, id: "t", owner: "o", method: "tools/call", status: "working",
   *   createdAt: 0, updatedAt: 0, ttlMs: null, expiresAt: null,
   * });
   * const lease = { holder: "me", expiresAt: Date.now() + 15_000 };
   * assert.deepEqual(await store.renew(["t", "gone"], lease), ["working", undefined]);
   * assert.deepEqual((await store.get("t"))?.lease, lease);
   * kv.close();
   * ```
   */
  async renew(ids: readonly string[], lease: TaskLease): Promise<(TaskStatus | undefined)[]> {
    const statuses: (TaskStatus | undefined)[] = new Array(ids.length).fill(undefined);
    for (let start = 0; start < ids.length; start += RENEW_BATCH) {
      const batch = ids.slice(start, start + RENEW_BATCH);
      const done = await this.#renewBatch(batch, lease);
      for (let i = 0; i < batch.length; i++) statuses[start + i] = done[i];
    }
    return statuses;
  }

  async #renewBatch(ids: readonly string[], lease: TaskLease): Promise<(TaskStatus | undefined)[]> {
    const statuses: (TaskStatus | undefined)[] = new Array(ids.length).fill(undefined);
    const heads = await retryLocked(
      () => Promise.all(ids.map((id) => this.#kv.get<Uint8Array>(this.#key(id)))),
      this.#retryMs,
    );
    const now = Date.now();
    const op = this.#kv.atomic();
    const written: number[] = [];
    const slow: number[] = [];
    heads.forEach((head, i) => {
      if (head.value === null) return;
      const { header, first } = readHead<Header>(head.value);
      if (header.expiresAt !== null && header.expiresAt <= now) return;
      if (header.parts !== 1) return void slow.push(i);
      const record = JSON.parse(decoder.decode(first)) as TaskRecord;
      statuses[i] = record.status;
      if (isTerminal(record.status)) return;
      const key = this.#key(ids[i]);
      const next = applyTaskPatch(record, { lease }, now);
      const writes = chunkWrites(
        key,
        { expiresAt: next.expiresAt },
        encoder.encode(JSON.stringify(next)),
      );
      if (writes.length !== 1) return void slow.push(i);
      const expireIn = next.expiresAt === null ? FOREVER_MS : Math.max(1, next.expiresAt - now);
      op.check({ key, versionstamp: head.versionstamp });
      op.set(key, writes[0].value, { expireIn });
      written.push(i);
    });
    if (written.length && !(await retryLocked(() => op.commit(), this.#retryMs)).ok) {
      slow.push(...written); // one of them changed meanwhile: each on its own
    }
    for (const i of slow) statuses[i] = (await this.update(ids[i], { lease }))?.status;
    return statuses;
  }

  /**
   * Forgets a task. Idempotent.
   *
   * @param id The task id.
   *
   * @example
   * ```ts
   * import { KvTaskStore } from "@anubis/session-kv";
   * const kv = await Deno.openKv(":memory:");
   * await new KvTaskStore(kv).delete("never-existed");
   * kv.close();
   * ```
   */
  async delete(id: string): Promise<void> {
    this.#uncount(id);
    const key = this.#key(id);
    await retryLocked(async () => {
      const current = await readChunked<Header>(this.#kv, key);
      const op = this.#kv.atomic();
      if (current) {
        const record = JSON.parse(decoder.decode(current.bytes)) as TaskRecord;
        op.delete(this.#ownerKey(record));
      }
      op.delete(key);
      for await (const part of this.#kv.list({ prefix: key })) op.delete(part.key as KvKey);
      await op.commit();
    }, this.#retryMs);
  }

  #key(id: string): KvKey {
    return [...this.#prefix, "task", id];
  }

  #ownerKey(record: TaskRecord): KvKey {
    return [...this.#prefix, "owner", record.owner, record.createdAt, record.id];
  }

  async #read(id: string) {
    const value = await retryLocked(
      () => readChunked<Header>(this.#kv, this.#key(id)),
      this.#retryMs,
    );
    if (!value) return undefined;
    const expired = value.header.expiresAt !== null && value.header.expiresAt <= Date.now();
    const record = expired ? undefined : JSON.parse(decoder.decode(value.bytes)) as TaskRecord;
    return { value, record };
  }

  /**
   * Replaces a task atomically with what `next` makes of the live one (or
   * `undefined`: nothing to write), retrying lost races. A creation (`creating`)
   * first commits without reading, checked on the key being absent (a new id
   * is nearly always free); only when that check fails does it read.
   */
  async #write(
    id: string,
    next: (current: TaskRecord | undefined) => TaskRecord | undefined,
    creating = false,
  ): Promise<TaskRecord | undefined> {
    const key = this.#key(id);
    const deadline = Date.now() + this.#retryMs;
    for (let attempt = 0;; attempt++) {
      const current = creating && attempt === 0 ? undefined : await this.#read(id);
      const record = next(current?.record);
      if (!record) return undefined;
      if (current?.record && record === current.record) return record;
      const bytes = encoder.encode(JSON.stringify(record));
      const header: Header = { expiresAt: record.expiresAt };
      const writes = chunkWrites(key, header, bytes);
      if (writes.length > MAX_PARTS_PER_COMMIT) {
        throw new RangeError(`Task ${id} is too large to store (${bytes.length} bytes of JSON)`);
      }
      const expireIn = record.expiresAt === null
        ? FOREVER_MS
        : Math.max(1, record.expiresAt - Date.now());
      const op = this.#kv.atomic().check({
        key,
        versionstamp: current?.value.versionstamp ?? null,
      });
      for (const w of writes) op.set(w.key, w.value, { expireIn });
      for (let part = writes.length; part < (current?.value.header.parts ?? 0); part++) {
        op.delete([...key, part]);
      }
      if (creating) op.set(this.#ownerKey(record), 1, { expireIn });
      if ((await retryLocked(() => op.commit(), this.#retryMs)).ok) {
        return JSON.parse(decoder.decode(bytes));
      }
      if (Date.now() >= deadline) throw new Error(`Could not write task ${id}: kept losing races`);
      // The unread first attempt of a creation found the id taken: read it now, at once.
      if (!(creating && attempt === 0)) await backoff(attempt);
    }
  }
}

function decodeCursor(cursor: string): [number, string] {
  try {
    const parsed = JSON.parse(atob(cursor));
    if (
      Array.isArray(parsed) && parsed.length === 2 && typeof parsed[0] === "number" &&
      typeof parsed[1] === "string"
    ) return parsed as [number, string];
  } catch {
    // Falls through to the error.
  }
  throw new Error("Invalid cursor");
}
