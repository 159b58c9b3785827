/**
 * The `TaskStore` contract: the durable state of MCP tasks (2025-11-25 core
 * tasks and the 2026-07-28 `io.modelcontextprotocol/tasks` extension), so any
 * instance sharing the store can answer for a task another instance runs.
 *
 * @module
 */

import type { JsonObject, JsonValue } from "./types.ts";

/**
 * A task's status. `completed`, `failed` and `cancelled` are terminal: a task
 * in one of them never moves again.
 *
 * @example
 * ```ts
 * import type { TaskStatus } from "@anubis/core";
 * import { isTerminal } from "@anubis/core/engine";
 * const status: TaskStatus = "input_required";
 * if (isTerminal(status)) throw new Error("input_required is not terminal");
 * ```
 */
export type TaskStatus = "working" | "input_required" | "completed" | "failed" | "cancelled";

/**
 * Whether a status is terminal.
 *
 * @param status The status.
 * @returns `true` for `completed`, `failed` and `cancelled`.
 *
 * @example
 * ```ts
 * import { isTerminal } from "@anubis/core/engine";
 * if (!isTerminal("cancelled") || isTerminal("working")) throw new Error("wrong");
 * ```
 */
export function isTerminal(status: TaskStatus): boolean {
  return status === "completed" || status === "failed" || status === "cancelled";
}

/**
 * The JSON-RPC error a failed task ended with.
 *
 * @example
 * ```ts
 * import type { TaskError } from "@anubis/core";
 * const error: TaskError = { code: -32603, message: "Internal error" };
 * ```
 */
export interface TaskError {
  /** The JSON-RPC error code. */
  code: number;
  /** The error message. */
  message: string;
  /** Extra data. */
  data?: JsonValue;
}

/**
 * Who runs a task and until when the claim holds: an instance renews its lease
 * while the task runs, and a task whose lease lapsed belongs to an instance
 * that died.
 *
 * @example
 * ```ts
 * import type { TaskLease } from "@anubis/core";
 * const lease: TaskLease = { holder: "instance-a", expiresAt: Date.now() + 10_000 };
 * ```
 */
export interface TaskLease {
  /** The instance holding the lease. */
  holder: string;
  /** When the lease lapses (ms since the epoch). */
  expiresAt: number;
}

/**
 * What a store keeps of a task. Every field is JSON-safe, so a store may keep
 * it as JSON bytes that another runtime reads.
 *
 * @example
 * ```ts
 * import type { TaskRecord } from "@anubis/core";
 * const now = Date.now();
 * const record: TaskRecord = {
 *   v: 1,
 *   id: crypto.randomUUID(),
 *   owner: "session:b4f1",
 *   method: "tools/call",
 *   status: "working",
 *   createdAt: now,
 *   updatedAt: now,
 *   ttlMs: 60_000,
 *   expiresAt: now + 60_000,
 * };
 * if (JSON.stringify(JSON.parse(JSON.stringify(record))) !== JSON.stringify(record)) {
 *   throw new Error("not JSON-safe");
 * }
 * ```
 */
export interface TaskRecord {
  /** The record format version. */
  v: 1;
  /** The task id (unguessable). */
  id: string;
  /** Who may see it: the session or principal that created it. */
  owner: string;
  /**
   * Whose share of the store it counts against (the store's per-caller
   * bound), when not its `owner`: the client address of an anonymous
   * stateless caller, say. Absent: the owner.
   */
  caller?: string;
  /** The request the task runs (`tools/call`). */
  method: string;
  /** The current status. */
  status: TaskStatus;
  /** A human-readable note on the status. */
  statusMessage?: string;
  /** When it was created (ms since the epoch). */
  createdAt: number;
  /** When it last changed (ms since the epoch). */
  updatedAt: number;
  /** How long it is kept after creation, in ms; `null` for unlimited. */
  ttlMs: number | null;
  /** When it is forgotten (ms since the epoch); `null` for never. */
  expiresAt: number | null;
  /** The polling interval suggested to clients, in ms. */
  pollIntervalMs?: number;
  /** The outcome of a `completed` task (or of a `failed` one that ended with a result). */
  result?: JsonObject;
  /** The JSON-RPC error a `failed` task ended with. */
  error?: TaskError;
  /** While `input_required`: the input the task waits for, by key. */
  inputRequests?: JsonObject;
  /** Answers the client sent that the task has not consumed yet, by key. */
  inputResponses?: JsonObject;
  /** Every input key the task ever asked for (keys are unique for its life). */
  inputKeys?: string[];
  /** The running instance's claim. */
  lease?: TaskLease;
}

/**
 * A change to a task that is not terminal.
 *
 * @example
 * ```ts
 * import type { TaskPatch } from "@anubis/core";
 * const patch: TaskPatch = { status: "input_required", inputRequests: { confirm: {} } };
 * ```
 */
export interface TaskPatch {
  /** A new non-terminal status. */
  status?: "working" | "input_required";
  /** A new status message. */
  statusMessage?: string;
  /** Replaces the pending input requests (`null` clears them). */
  inputRequests?: JsonObject | null;
  /** Merged into the stored answers (a `null` value removes a key). */
  inputResponses?: { [key: string]: JsonObject[string] | null };
  /** Added to the keys asked for. */
  inputKeys?: string[];
  /** Replaces the lease. */
  lease?: TaskLease;
}

/**
 * How a task ended.
 *
 * @example
 * ```ts
 * import type { TaskOutcome } from "@anubis/core";
 * const outcome: TaskOutcome = {
 *   status: "completed",
 *   result: { content: [{ type: "text", text: "done" }] },
 * };
 * ```
 */
export interface TaskOutcome {
  /** The terminal status. */
  status: "completed" | "failed" | "cancelled";
  /** The result, for `completed` (and a `failed` tool error). */
  result?: JsonObject;
  /** The error, for a `failed` task. */
  error?: TaskError;
  /** A human-readable note. */
  statusMessage?: string;
}

/**
 * One page of an owner's tasks.
 *
 * @example
 * ```ts
 * import type { TaskPage } from "@anubis/core";
 * const page: TaskPage = { tasks: [], nextCursor: undefined };
 * ```
 */
export interface TaskPage {
  /** The tasks, oldest first. */
  tasks: TaskRecord[];
  /** Where the next page starts; absent on the last page. */
  nextCursor?: string;
}

/**
 * Whose share of a store's per-caller bound a task counts against: its
 * `caller`, else its `owner`.
 *
 * @param record The task.
 * @returns The caller's key.
 *
 * @example
 * ```ts
 * import type { TaskRecord } from "@anubis/core";
 * import { callerOf } from "@anubis/core/engine";
 * import assert from "node:assert/strict";
 * const record: TaskRecord = {
 *   v: 1, id: "t", owner: "anonymous", caller: "client:10.0.0.7", method: "tools/call",
 *   status: "working", createdAt: 0, updatedAt: 0, ttlMs: null, expiresAt: null,
 * };
 * assert.equal(callerOf(record), "client:10.0.0.7");
 * assert.equal(callerOf({ ...record, caller: undefined }), "anonymous");
 * ```
 */
export function callerOf(record: TaskRecord): string {
  return record.caller ?? record.owner;
}

/**
 * What a {@link TaskStore} rejects a `create` with when the task would take
 * its caller past its share of the store (`scope: "caller"`), or the store
 * past its total bound (`scope: "total"`). The task runtime answers the
 * request with `-32050` (`ErrorCode.TOO_MANY_TASKS`) and this message, where
 * any other refusal is `-32603`.
 *
 * @example
 * ```ts
 * import { MemoryTaskStore, TaskLimitError } from "@anubis/core";
 * import assert from "node:assert/strict";
 * const store = new MemoryTaskStore({ maxTasks: 10, maxTasksPerCaller: 1 });
 * const task = (id: string) => ({
 *   v: 1 as const, id, owner: "session:a", method: "tools/call", status: "working" as const,
 *   createdAt: 0, updatedAt: 0, ttlMs: null, expiresAt: null,
 * });
 * await store.create(task("t1"));
 * const refused = await store.create(task("t2")).catch((error) => error);
 * assert.ok(refused instanceof TaskLimitError);
 * assert.equal(refused.scope, "caller");
 * assert.equal(refused.limit, 1);
 * ```
 */
export class TaskLimitError extends Error {
  /**
   * Which bound was hit: the caller's share, or the store's total.
   *
   * @example
   * ```ts
   * import { TaskLimitError } from "@anubis/core";
   * import assert from "node:assert/strict";
   * assert.equal(new TaskLimitError("total", 10_000).scope, "total");
   * ```
   */
  readonly scope: "caller" | "total";
  /**
   * That bound, in tasks.
   *
   * @example
   * ```ts
   * import { TaskLimitError } from "@anubis/core";
   * import assert from "node:assert/strict";
   * assert.equal(new TaskLimitError("caller", 1_000).limit, 1_000);
   * ```
   */
  readonly limit: number;

  /**
   * Makes the error.
   *
   * @param scope Which bound was hit.
   * @param limit That bound.
   */
  constructor(scope: "caller" | "total", limit: number) {
    super(
      scope === "caller"
        ? `Too many tasks: this caller already holds ${limit}, the most one caller may; ` +
          "cancel some or wait until they end or expire"
        : `Too many tasks: the task store is full (${limit} tasks); try again later`,
    );
    this.name = "TaskLimitError";
    this.scope = scope;
    this.limit = limit;
  }
}

/**
 * Keeps tasks. The rules every implementation keeps (the contract suite
 * `taskStoreContract` of `@anubis/testing` checks them):
 *
 * - `create` stores the record before it resolves, and rejects an id it
 *   already holds.
 * - A terminal state is written once: the first `finish` wins, later
 *   `finish` and `update` calls leave the record as it is.
 * - A task past its `expiresAt` is gone: `get` gives `undefined`, `list`
 *   omits it, and its storage is reclaimed.
 * - `list` shows only the owner's tasks.
 * - Records read are copies; every method rejects when it cannot do its work.
 *
 * @example
 * ```ts
 * import { MemoryTaskStore, type TaskStore } from "@anubis/core";
 * const store: TaskStore = new MemoryTaskStore();
 * const now = Date.now();
 * await store.create({
 *   v: 1, id: "t1", owner: "o", method: "tools/call", status: "working",
 *   createdAt: now, updatedAt: now, ttlMs: null, expiresAt: null,
 * });
 * const done = await store.finish("t1", { status: "completed", result: { content: [] } });
 * const again = await store.finish("t1", { status: "cancelled" });
 * if (done?.status !== "completed" || again?.status !== "completed") throw new Error("rewritten");
 * ```
 */
export interface TaskStore {
  /**
   * Stores a new task; of concurrent creations of one id exactly one
   * succeeds, and an expired task of the same id is replaced. A bounded
   * store counts every live task (whatever its status) toward its bounds.
   *
   * @param record The task.
   * @throws When the id exists; a {@link TaskLimitError} when a bound is hit.
   */
  create(record: TaskRecord): Promise<void>;
  /**
   * Reads a task; unknown and expired ids give `undefined`.
   *
   * @param id The task id.
   */
  get(id: string): Promise<TaskRecord | undefined>;
  /**
   * Changes a task that is not terminal (a terminal one is returned as it is).
   *
   * @param id The task id.
   * @param patch The change.
   * @returns The record after the change, or `undefined` for an unknown id.
   */
  update(id: string, patch: TaskPatch): Promise<TaskRecord | undefined>;
  /**
   * Ends a task, once: a task already terminal keeps its outcome.
   *
   * @param id The task id.
   * @param outcome How it ended.
   * @returns The record as stored afterwards (compare its status to see
   * whether this outcome won), or `undefined` for an unknown id.
   */
  finish(id: string, outcome: TaskOutcome): Promise<TaskRecord | undefined>;
  /**
   * One page of an owner's live tasks, oldest first.
   *
   * @param owner The owner.
   * @param options Where to start and how many at most.
   * @throws When the cursor is not one this store gave.
   */
  list(owner: string, options?: { cursor?: string; limit?: number }): Promise<TaskPage>;
  /**
   * Forgets a task. Idempotent.
   *
   * @param id The task id.
   */
  delete(id: string): Promise<void>;
  /**
   * Optional: renews the leases of many running tasks at once, for the
   * runtime's lease sweep, cheaper than one `update(id, { lease })` each
   * (which the runtime uses when a store has no `renew`). For each id the
   * rules of `update` apply: a terminal task is left as it is.
   *
   * @param ids The tasks.
   * @param lease The new lease.
   * @returns For each id, in order, its status afterwards, or `undefined`
   * for an unknown or expired one.
   */
  renew?(ids: readonly string[], lease: TaskLease): Promise<(TaskStatus | undefined)[]>;
}

/**
 * Applies a patch to a copy of a record (the rules of {@link TaskStore.update}),
 * for store implementations.
 *
 * @param record The stored record.
 * @param patch The change.
 * @param now The time of the change.
 * @returns The changed copy, or the record itself when it is terminal.
 *
 * @example
 * ```ts
 * import type { TaskRecord } from "@anubis/core";
 * import { applyTaskPatch } from "@anubis/core/engine";
 * const record: TaskRecord = {
 *   v: 1, id: "t", owner: "o", method: "tools/call", status: "working",
 *   createdAt: 0, updatedAt: 0, ttlMs: null, expiresAt: null,
 * };
 * const next = applyTaskPatch(record, { inputResponses: { a: 1 } }, 5);
 * if (next.updatedAt !== 5 || next.inputResponses?.a !== 1) throw new Error("not applied");
 * ```
 */
export function applyTaskPatch(record: TaskRecord, patch: TaskPatch, now: number): TaskRecord {
  if (isTerminal(record.status)) return record;
  const next: TaskRecord = { ...record, updatedAt: now };
  if (patch.status) next.status = patch.status;
  if (patch.statusMessage !== undefined) next.statusMessage = patch.statusMessage;
  if (patch.inputRequests === null) delete next.inputRequests;
  else if (patch.inputRequests) next.inputRequests = patch.inputRequests;
  if (patch.inputResponses) {
    const merged: JsonObject = { ...record.inputResponses };
    for (const [key, value] of Object.entries(patch.inputResponses)) {
      if (value === null) delete merged[key];
      else merged[key] = value;
    }
    if (Object.keys(merged).length) next.inputResponses = merged;
    else delete next.inputResponses;
  }
  if (patch.inputKeys?.length) {
    next.inputKeys = [...new Set([...(record.inputKeys ?? []), ...patch.inputKeys])];
  }
  if (patch.lease) next.lease = patch.lease;
  return next;
}

/**
 * Applies an outcome to a copy of a record (the rules of
 * {@link TaskStore.finish}), for store implementations.
 *
 * @param record The stored record.
 * @param outcome How it ended.
 * @param now The time of the change.
 * @returns The ended copy, or the record itself when it was already terminal.
 *
 * @example
 * ```ts
 * import type { TaskRecord } from "@anubis/core";
 * import { applyTaskOutcome } from "@anubis/core/engine";
 * const record: TaskRecord = {
 *   v: 1, id: "t", owner: "o", method: "tools/call", status: "input_required",
 *   createdAt: 0, updatedAt: 0, ttlMs: null, expiresAt: null, inputRequests: { q: {} },
 * };
 * const ended = applyTaskOutcome(record, { status: "cancelled" }, 9);
 * if (ended.status !== "cancelled" || ended.inputRequests) throw new Error("not ended");
 * ```
 */
export function applyTaskOutcome(
  record: TaskRecord,
  outcome: TaskOutcome,
  now: number,
): TaskRecord {
  if (isTerminal(record.status)) return record;
  const { inputRequests: _asked, lease: _lease, ...rest } = record;
  const next: TaskRecord = { ...rest, status: outcome.status, updatedAt: now };
  if (outcome.result) next.result = outcome.result;
  if (outcome.error) next.error = outcome.error;
  if (outcome.statusMessage !== undefined) next.statusMessage = outcome.statusMessage;
  return next;
}
