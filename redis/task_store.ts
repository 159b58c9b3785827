/**
 * A Redis {@link TaskStore}: tasks every instance on the same Redis can
 * answer for, poll and cancel, with bounds shared by those instances.
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
import { applyTaskOutcome, applyTaskPatch, callerOf } from "@anubis/core/engine";
import type { RedisConnection } from "./connection.ts";
import { command, commandTimeout, LuaScript, type Reply } from "./_commands.ts";

/**
 * Options of a {@link RedisTaskStore}.
 *
 * @example
 * ```ts
 * import type { RedisTaskStoreOptions } from "@anubis/redis";
 * import assert from "node:assert/strict";
 * const options: RedisTaskStoreOptions = { maxTasks: 50_000, maxTasksPerCaller: 100 };
 * assert.equal(options.maxTasksPerCaller, 100);
 * ```
 */
export interface RedisTaskStoreOptions {
  /**
   * What every key of the store starts with (default `"{anubis:tasks}:"`).
   * Keep a hash tag (`{…}`) in it: the scripts that enforce the bounds touch
   * a task and the shared counts together, which Redis Cluster allows only
   * within one slot.
   */
  prefix?: string;
  /**
   * The most live tasks in the store, over every instance sharing it,
   * whatever their status (default 10,000): a `create` beyond it is refused
   * with a `TaskLimitError` (`scope: "total"`). Tasks leave the count when
   * they expire or are deleted.
   */
  maxTasks?: number;
  /**
   * The most live tasks one caller (a task's `caller`, else its `owner`) may
   * hold, over every instance (default a tenth of `maxTasks`): beyond it a
   * `create` is refused with a `TaskLimitError` (`scope: "caller"`).
   */
  maxTasksPerCaller?: number;
  /** The largest task, in bytes of JSON (default 1 MiB); larger ones are refused with a `RangeError`. */
  maxTaskBytes?: number;
  /** How long one Redis command may take before it rejects, in ms (default 5,000). */
  commandTimeoutMs?: number;
}

// A task is a hash: j the record's JSON without its lease, l the lease's JSON
// (or ""), v the version every write bumps, e expiresAt (or "" for never),
// s the status, c the caller, o the owner, m its member in the owner's index.
// Counts: <prefix>live (every live id, scored by expiry) and <prefix>c:<caller>
// (the caller's), swept of expired ids before each check. Owner index:
// <prefix>o:<owner>, members "<createdAt, 16 digits>|<id>" at score 0, read in
// lexical order. Keys built in the scripts share the prefix's hash tag.

// KEYS: task, live, caller's, owner's. ARGV: id, json, exp, caller, status,
// owner, member, now, max, maxPerCaller, prefix, lease.
const CREATE = new LuaScript(`
local now = tonumber(ARGV[8])
local old = redis.call('HMGET', KEYS[1], 'e', 'c', 'o', 'm')
if old[1] then
  if old[1] == '' or tonumber(old[1]) > now then return 'exists' end
  redis.call('DEL', KEYS[1])
  redis.call('ZREM', KEYS[2], ARGV[1])
  redis.call('ZREM', ARGV[11] .. 'c:' .. old[2], ARGV[1])
  redis.call('ZREM', ARGV[11] .. 'o:' .. old[3], old[4])
end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
if redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[10]) then return 'caller' end
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[9]) then return 'total' end
local exp = ARGV[3]
redis.call('HSET', KEYS[1], 'j', ARGV[2], 'l', ARGV[12], 'v', 1, 'e', exp, 's', ARGV[5],
  'c', ARGV[4], 'o', ARGV[6], 'm', ARGV[7])
if exp ~= '' then redis.call('PEXPIREAT', KEYS[1], exp) end
local score = exp == '' and '+inf' or exp
redis.call('ZADD', KEYS[2], score, ARGV[1])
for i, key in ipairs({KEYS[3], KEYS[4]}) do
  local left = redis.call('PTTL', key)
  if i == 1 then redis.call('ZADD', key, score, ARGV[1]) else redis.call('ZADD', key, 0, ARGV[7]) end
  if exp == '' then redis.call('PERSIST', key)
  elseif left == -2 or (left >= 0 and now + left < tonumber(exp)) then
    redis.call('PEXPIREAT', key, exp)
  end
end
return 'ok'`);

// KEYS: task. ARGV: version read, json, lease, status, now. 1 written, 0 changed meanwhile, -1 gone.
const WRITE = new LuaScript(`
local cur = redis.call('HMGET', KEYS[1], 'v', 'e')
if not cur[1] then return -1 end
if cur[2] ~= '' and tonumber(cur[2]) <= tonumber(ARGV[5]) then return -1 end
if cur[1] ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'j', ARGV[2], 'l', ARGV[3], 's', ARGV[4], 'v', tonumber(cur[1]) + 1)
return 1`);

// KEYS: tasks. ARGV: lease, now. Each task's status afterwards ("" unknown or expired).
const RENEW = new LuaScript(`
local now = tonumber(ARGV[2])
local out = {}
for i, key in ipairs(KEYS) do
  local cur = redis.call('HMGET', key, 's', 'e')
  if not cur[1] or (cur[2] ~= '' and tonumber(cur[2]) <= now) then out[i] = ''
  else
    out[i] = cur[1]
    if cur[1] == 'working' or cur[1] == 'input_required' then
      redis.call('HSET', key, 'l', ARGV[1])
      redis.call('HINCRBY', key, 'v', 1)
    end
  end
end
return out`);

// KEYS: task, live. ARGV: id, prefix.
const DELETE = new LuaScript(`
local old = redis.call('HMGET', KEYS[1], 'c', 'o', 'm')
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
if old[1] then
  redis.call('ZREM', ARGV[2] .. 'c:' .. old[1], ARGV[1])
  redis.call('ZREM', ARGV[2] .. 'o:' .. old[2], old[3])
end
return 1`);

const encoder = new TextEncoder();
const CURSOR = /^\d{16}\|/;
/** Ids read per round trip while listing. */
const LIST_BATCH = 100;
/** Leases renewed per script (a script holds Redis while it runs: a few ms at most). */
const RENEW_BATCH = 500;

function positive(name: string, value: number): number {
  if (!(value >= 1) || !Number.isFinite(value)) {
    throw new RangeError(`${name} must be a positive number, got ${value}`);
  }
  return Math.floor(value);
}

/** Where a task sorts in its owner's index: by creation, then id. */
function memberOf(record: TaskRecord): string {
  const at = Math.max(0, Math.floor(record.createdAt)) || 0;
  return `${String(at).padStart(16, "0")}|${record.id}`;
}

/** A task read with the version it was read at. */
interface Read {
  record: TaskRecord;
  version: string;
}

/**
 * Keeps tasks in Redis, shared by every instance pointed at it:
 *
 * - A task created at one instance is read, polled, answered and cancelled
 *   at any other. Each change is a compare-and-set on the task's version
 *   (a Lua script), retried when another instance wrote first, so an
 *   outcome is written once however instances race.
 * - {@link renew} renews many leases in one script and reports each task's
 *   status, so the instance running a task learns at its next sweep that
 *   another instance cancelled it.
 * - Bounded over every instance by default: `maxTasks` in all,
 *   `maxTasksPerCaller` per caller, checked and counted in the same script
 *   that creates the task (two instances cannot pass a bound together).
 * - A task past its `expiresAt` is gone (Redis expires its key at that time,
 *   and reads check it too); every command is bounded by `commandTimeoutMs`.
 *
 * @example
 * ```ts ignore
 * import { openRedis, RedisTaskStore } from "@anubis/redis";
 * import assert from "node:assert/strict";
 * const redis = await openRedis("redis://127.0.0.1:6379");
 * const [here, there] = [new RedisTaskStore(redis), new RedisTaskStore(redis)];
 * const now = Date.now();
 * await here.create({
 *   v: 1, id: "t1", owner: "o", method: "tools/call", status: "working",
 *   createdAt: now, updatedAt: now, ttlMs: 60_000, expiresAt: now + 60_000,
 * });
 * await there.finish("t1", { status: "cancelled" }); // another instance cancels
 * const lease = { holder: "here", expiresAt: now + 15_000 };
 * assert.deepEqual(await here.renew(["t1"], lease), ["cancelled"]);
 * redis.close();
 * ```
 */
export class RedisTaskStore implements TaskStore {
  readonly #redis: RedisConnection;
  readonly #prefix: string;
  readonly #live: string;
  readonly #max: number;
  readonly #maxPerCaller: number;
  readonly #maxBytes: number;
  readonly #timeout: number;

  /**
   * Creates a store on a connection the caller owns (and closes).
   *
   * @param redis The connection, from `openRedis`.
   * @param options Key prefix, bounds and command timeout.
   */
  constructor(redis: RedisConnection, options: RedisTaskStoreOptions = {}) {
    this.#redis = redis;
    this.#prefix = options.prefix ?? "{anubis:tasks}:";
    this.#live = `${this.#prefix}live`;
    this.#max = positive("maxTasks", options.maxTasks ?? 10_000);
    this.#maxPerCaller = positive(
      "maxTasksPerCaller",
      options.maxTasksPerCaller ?? Math.max(1, Math.ceil(this.#max / 10)),
    );
    this.#maxBytes = positive("maxTaskBytes", options.maxTaskBytes ?? 1024 * 1024);
    this.#timeout = commandTimeout(options.commandTimeoutMs);
  }

  /**
   * How many live tasks the store holds, over every instance.
   *
   * @returns The count.
   *
   * @example
   * ```ts ignore
   * import { openRedis, RedisTaskStore } from "@anubis/redis";
   * import assert from "node:assert/strict";
   * const redis = await openRedis("redis://127.0.0.1:6379");
   * assert.equal(typeof await new RedisTaskStore(redis).count(), "number");
   * redis.close();
   * ```
   */
  async count(): Promise<number> {
    return Number(await this.#cmd(["ZCOUNT", this.#live, `(${Date.now()}`, "+inf"]));
  }

  /**
   * How many live tasks a caller holds, over every instance.
   *
   * @param caller The caller (a task's `caller`, else its `owner`).
   * @returns The count.
   *
   * @example
   * ```ts ignore
   * import { openRedis, RedisTaskStore } from "@anubis/redis";
   * import assert from "node:assert/strict";
   * const redis = await openRedis("redis://127.0.0.1:6379");
   * assert.equal(await new RedisTaskStore(redis).heldBy("nobody"), 0);
   * redis.close();
   * ```
   */
  async heldBy(caller: string): Promise<number> {
    const key = `${this.#prefix}c:${caller}`;
    return Number(await this.#cmd(["ZCOUNT", key, `(${Date.now()}`, "+inf"]));
  }

  /**
   * Stores a new task (an expired one of the same id is replaced).
   *
   * @param record The task.
   * @throws When the id exists; a `TaskLimitError` when its caller holds its
   * share or the store holds `maxTasks`; a `RangeError` when it is over
   * `maxTaskBytes`.
   *
   * @example
   * ```ts ignore
   * import { openRedis, RedisTaskStore } from "@anubis/redis";
   * import { TaskLimitError } from "@anubis/core";
   * import assert from "node:assert/strict";
   * const redis = await openRedis("redis://127.0.0.1:6379");
   * const store = new RedisTaskStore(redis, { prefix: "{doc}:", maxTasksPerCaller: 1 });
   * const task = (id: string) => ({
   *   v: 1 as const, id, owner: "session:a", method: "tools/call", status: "working" as const,
   *   createdAt: 0, updatedAt: 0, ttlMs: null, expiresAt: null,
   * });
   * await store.create(task("t1"));
   * await assert.rejects(store.create(task("t2")), TaskLimitError);
   * redis.close();
   * ```
   */
  async create(record: TaskRecord): Promise<void> {
    const { lease, ...rest } = record;
    const json = this.#encode(rest as TaskRecord);
    const outcome = await CREATE.run(
      this.#redis,
      [
        this.#key(record.id),
        this.#live,
        `${this.#prefix}c:${callerOf(record)}`,
        `${this.#prefix}o:${record.owner}`,
      ],
      [
        record.id,
        json,
        record.expiresAt === null ? "" : Math.ceil(record.expiresAt),
        callerOf(record),
        record.status,
        record.owner,
        memberOf(record),
        Date.now(),
        this.#max,
        this.#maxPerCaller,
        this.#prefix,
        lease ? JSON.stringify(lease) : "",
      ],
      this.#timeout,
    );
    if (outcome === "exists") throw new Error(`Task ${record.id} exists`);
    if (outcome === "caller") throw new TaskLimitError("caller", this.#maxPerCaller);
    if (outcome === "total") throw new TaskLimitError("total", this.#max);
  }

  /**
   * Reads a task.
   *
   * @param id The task id.
   * @returns The task, or `undefined` when unknown or expired.
   *
   * @example
   * ```ts ignore
   * import { openRedis, RedisTaskStore } from "@anubis/redis";
   * import assert from "node:assert/strict";
   * const redis = await openRedis("redis://127.0.0.1:6379");
   * assert.equal(await new RedisTaskStore(redis).get("nope"), undefined);
   * redis.close();
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
   * ```ts ignore
   * import { openRedis, RedisTaskStore } from "@anubis/redis";
   * import assert from "node:assert/strict";
   * const redis = await openRedis("redis://127.0.0.1:6379");
   * assert.equal(await new RedisTaskStore(redis).update("nope", {}), undefined);
   * redis.close();
   * ```
   */
  update(id: string, patch: TaskPatch): Promise<TaskRecord | undefined> {
    return this.#write(id, (current) => applyTaskPatch(current, patch, Date.now()));
  }

  /**
   * Ends a task once: the first outcome stored wins, at whichever instance.
   *
   * @param id The task id.
   * @param outcome How it ended.
   * @returns The task afterwards, or `undefined` for an unknown id.
   *
   * @example
   * ```ts ignore
   * import { openRedis, RedisTaskStore } from "@anubis/redis";
   * import assert from "node:assert/strict";
   * const redis = await openRedis("redis://127.0.0.1:6379");
   * assert.equal(await new RedisTaskStore(redis).finish("nope", { status: "cancelled" }), undefined);
   * redis.close();
   * ```
   */
  finish(id: string, outcome: TaskOutcome): Promise<TaskRecord | undefined> {
    return this.#write(id, (current) => applyTaskOutcome(current, outcome, Date.now()));
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
   * ```ts ignore
   * import { openRedis, RedisTaskStore } from "@anubis/redis";
   * import assert from "node:assert/strict";
   * const redis = await openRedis("redis://127.0.0.1:6379");
   * assert.deepEqual((await new RedisTaskStore(redis).list("nobody")).tasks, []);
   * redis.close();
   * ```
   */
  async list(owner: string, options: { cursor?: string; limit?: number } = {}): Promise<TaskPage> {
    const limit = Math.max(1, Math.floor(options.limit ?? 50));
    if (options.cursor !== undefined && !CURSOR.test(options.cursor)) {
      throw new Error("Invalid cursor");
    }
    const index = `${this.#prefix}o:${owner}`;
    let from = options.cursor === undefined ? "-" : `(${options.cursor}`;
    const tasks: TaskRecord[] = [];
    for (;;) {
      const members = await this.#cmd<string[]>(
        ["ZRANGEBYLEX", index, from, "+", "LIMIT", "0", String(LIST_BATCH)],
      );
      const reads = await Promise.all(members.map((m) => this.#read(m.slice(17))));
      for (let i = 0; i < members.length; i++) {
        const record = reads[i]?.record;
        if (!record || record.owner !== owner || memberOf(record) !== members[i]) continue;
        if (tasks.length === limit) return { tasks, nextCursor: memberOf(tasks[limit - 1]) };
        tasks.push(record);
      }
      if (members.length < LIST_BATCH) return { tasks };
      from = `(${members[members.length - 1]}`;
    }
  }

  /**
   * Renews the leases of running tasks in one script per 500 tasks (a round trip each): the
   * runtime's lease sweep. Each task's status comes back, so a task another
   * instance cancelled (or answered) is seen as such by the one running it.
   *
   * @param ids The tasks.
   * @param lease The new lease.
   * @returns For each id, its status afterwards (`undefined`: unknown or expired).
   *
   * @example
   * ```ts ignore
   * import { openRedis, RedisTaskStore } from "@anubis/redis";
   * import assert from "node:assert/strict";
   * const redis = await openRedis("redis://127.0.0.1:6379");
   * const lease = { holder: "me", expiresAt: Date.now() + 15_000 };
   * assert.deepEqual(await new RedisTaskStore(redis).renew(["gone"], lease), [undefined]);
   * redis.close();
   * ```
   */
  async renew(ids: readonly string[], lease: TaskLease): Promise<(TaskStatus | undefined)[]> {
    const statuses: (TaskStatus | undefined)[] = [];
    for (let start = 0; start < ids.length; start += RENEW_BATCH) {
      const batch = ids.slice(start, start + RENEW_BATCH);
      const read = await RENEW.run<string[]>(
        this.#redis,
        batch.map((id) => this.#key(id)),
        [JSON.stringify(lease), Date.now()],
        this.#timeout,
      );
      for (const status of read) statuses.push(status === "" ? undefined : status as TaskStatus);
    }
    return statuses;
  }

  /**
   * Forgets a task. Idempotent.
   *
   * @param id The task id.
   *
   * @example
   * ```ts ignore
   * import { openRedis, RedisTaskStore } from "@anubis/redis";
   * const redis = await openRedis("redis://127.0.0.1:6379");
   * await new RedisTaskStore(redis).delete("never-existed");
   * redis.close();
   * ```
   */
  async delete(id: string): Promise<void> {
    await DELETE.run(this.#redis, [this.#key(id), this.#live], [id, this.#prefix], this.#timeout);
  }

  #key(id: string): string {
    return `${this.#prefix}t:${id}`;
  }

  #cmd<T extends Reply>(args: string[]): Promise<T> {
    return command<T>(this.#redis, args, this.#timeout);
  }

  #encode(record: TaskRecord): string {
    const json = JSON.stringify(record);
    const bytes = json.length * 3 <= this.#maxBytes ? json.length : encoder.encode(json).length;
    if (bytes > this.#maxBytes) {
      throw new RangeError(
        `Task ${record.id} is too large to store (${bytes} bytes of JSON; a task may take at ` +
          `most ${this.#maxBytes})`,
      );
    }
    return json;
  }

  async #read(id: string): Promise<Read | undefined> {
    const [json, lease, version, expires] = await this.#cmd<(string | null)[]>(
      ["HMGET", this.#key(id), "j", "l", "v", "e"],
    );
    if (json === null || version === null) return undefined;
    if (expires && Number(expires) <= Date.now()) return undefined;
    const record = JSON.parse(json) as TaskRecord;
    if (lease) record.lease = JSON.parse(lease);
    return { record, version };
  }

  /**
   * Replaces a live task with what `next` makes of it, checked against the
   * version read; a lost race reads again. A terminal task comes back as is.
   */
  async #write(
    id: string,
    next: (current: TaskRecord) => TaskRecord,
  ): Promise<TaskRecord | undefined> {
    const deadline = Date.now() + this.#timeout;
    for (let attempt = 0;; attempt++) {
      const current = await this.#read(id);
      if (!current) return undefined;
      const record = next(current.record);
      if (record === current.record) return record;
      const { lease, ...rest } = record;
      const written = await WRITE.run(
        this.#redis,
        [this.#key(id)],
        [
          current.version,
          this.#encode(rest as TaskRecord),
          lease ? JSON.stringify(lease) : "",
          record.status,
          Date.now(),
        ],
        this.#timeout,
      );
      if (written === 1) return JSON.parse(JSON.stringify(record));
      if (written === -1) return undefined;
      if (Date.now() >= deadline) throw new Error(`Could not write task ${id}: kept losing races`);
      if (attempt > 2) await new Promise((resolve) => setTimeout(resolve, Math.random() * 5));
    }
  }
}
