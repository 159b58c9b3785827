/**
 * Tasks: a `tools/call` that runs in the background while the client polls.
 * 2025-11-25 core tasks (`params.task`, `CreateTaskResult`, `tasks/get`,
 * `tasks/result`, `tasks/list`, `tasks/cancel`, `notifications/tasks/status`).
 * The tool's handler is the same one a plain call runs; only its frame
 * differs (its own cancellation, messages tagged with the related task).
 *
 * @module
 */

import { Cancellation } from "./cancellation.ts";
import type { Dialect } from "./dialect.ts";
import { admit, type DispatchTarget } from "./_methods/dispatch.ts";
import { ErrorCode, McpError } from "./errors.ts";
import { emitter, type Exchange } from "./exchange.ts";
import type { Reply } from "./reply.ts";
import type { Frame } from "./frame.ts";
import { errorResponse, type JsonRpcRequest, resultResponse } from "./json_rpc.ts";
import { type FrameTask, legacyFrame } from "./legacy/_frame.ts";
import { logger } from "./logger.ts";
import { MetaKey } from "./meta.ts";
import { encodeContext, errorReply } from "./reply.ts";
import type { Awaitable } from "./awaitable.ts";
import type { Session } from "./legacy/session.ts";
import {
  isTerminal,
  TaskLimitError,
  type TaskOutcome,
  type TaskRecord,
  type TaskStatus,
  type TaskStore,
} from "./task_store.ts";
import { unknownTool, visibleTools } from "./_methods/tools.ts";
import type { JsonObject, JsonValue } from "./types.ts";

/** How long a task is kept when the client asks for no TTL, and the most it may ask for. */
const DEFAULT_TTL_MS = 10 * 60_000;
const MAX_TTL_MS = 24 * 60 * 60_000;
const POLL_INTERVAL_MS = 1_000;
/**
 * How long an instance's claim on a running task lasts; it renews it every
 * third of that. A task whose lease lapsed (its instance died) is `failed`
 * on the next read, so within `LEASE_MS` of the death plus one poll.
 */
export const LEASE_MS = 15_000;
/**
 * How often the runtime looks through the tasks it runs, for ttls that ran
 * out and leases due: a task outlives its ttl by at most this (a look is one
 * step per running task, so four a second cost little).
 */
const SWEEP_MS = 250;
/** How many of a session's tasks are released per store page when it ends. */
const RELEASE_PAGE = 100;

/** The reason a task's work is aborted with: an `AbortError`, saying why. */
function abortError(message: string): DOMException {
  return new DOMException(message, "AbortError");
}

/** A task this instance runs. */
interface Running {
  readonly cancellation: Cancellation;
  readonly record: TaskRecord;
  /** When its lease is next renewed (ms since the epoch). */
  renewAt: number;
  readonly notify?: (task: TaskRecord) => void;
}

/** Serves a request as the engine would (middleware, `handleRequest`, routing). */
export type Serve = (frame: Frame) => Awaitable<Record<string, unknown> | undefined>;

type Support = "forbidden" | "optional" | "required";

/** A tool result's `isError`: a `failed` task (2025-11-25) or a `completed` one (the 2026 extension). */
export type ToolErrorStatus = "failed" | "completed";

/** The task as the 2025-11-25 wire shows it. */
function wireTask(record: TaskRecord): Record<string, unknown> {
  const task: Record<string, unknown> = {
    taskId: record.id,
    status: record.status,
  };
  if (record.statusMessage !== undefined) task.statusMessage = record.statusMessage;
  task.createdAt = new Date(record.createdAt).toISOString();
  task.lastUpdatedAt = new Date(record.updatedAt).toISOString();
  task.ttl = record.ttlMs;
  if (record.pollIntervalMs !== undefined) task.pollInterval = record.pollIntervalMs;
  return task;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A JSON-safe copy (what a store of JSON bytes would give back). */
function json<T>(value: T): T {
  return JSON.parse(JSON.stringify(value));
}

/** Who a legacy request's tasks belong to: its session. */
function sessionOwner(session: Session): string {
  return `session:${session.key}`;
}

/** The tasks of one engine: the store, the tasks this instance runs, and who waits on them. */
export class TaskRuntime {
  readonly #target: DispatchTarget;
  readonly #store: TaskStore;
  readonly #running = new Map<string, Running>();
  // The ids of the running tasks, by owner (a session's, released when it ends).
  readonly #owned = new Map<string, Set<string>>();
  // One timer for every task this instance runs: ttls and lease renewals.
  #sweeper: ReturnType<typeof setInterval> | undefined;
  readonly #waiters = new Map<string, Set<() => void>>();
  readonly #instance = crypto.randomUUID();

  constructor(target: DispatchTarget, store: TaskStore) {
    this.#target = target;
    this.#store = store;
  }

  /** The store. */
  get store(): TaskStore {
    return this.#store;
  }

  /** The engine's server and versions. */
  get target(): DispatchTarget {
    return this.#target;
  }

  /**
   * Serves a legacy request when it is a task matter (a task-augmented or
   * task-required `tools/call`, or a `tasks/*` method); `undefined` otherwise.
   */
  legacy(
    request: JsonRpcRequest,
    exchange: Exchange,
    session: Session,
    serve: Serve,
  ): Promise<Reply> | undefined {
    const dialect = session.dialect!;
    if (!dialect.supportsFeature("tasks")) return undefined;
    const method = request.method;
    if (method === "tools/call") {
      const task = request.params?.task;
      if (task === undefined) {
        const name = request.params?.name;
        if (typeof name !== "string" || this.support(name) !== "required") return undefined;
        return Promise.resolve(errorReply(
          request,
          new McpError(ErrorCode.METHOD_NOT_FOUND, `Tool ${name} must be called as a task`),
        ));
      }
      return this.#answer(request, () => this.#create(request, exchange, session, dialect, serve));
    }
    if (!method.startsWith("tasks/")) return undefined;
    return this.#answer(request, () => this.#query(request, session, dialect));
  }

  async #answer(request: JsonRpcRequest, serve: () => Promise<Reply>): Promise<Reply> {
    try {
      return await serve();
    } catch (error) {
      return errorReply(request, error);
    }
  }

  /** The task support a static tool declares. */
  support(name: string): Support {
    return this.#target.server.tools.get(name)?.execution?.taskSupport ?? "forbidden";
  }

  async #create(
    request: JsonRpcRequest,
    exchange: Exchange,
    session: Session,
    dialect: Dialect,
    serve: Serve,
  ): Promise<Reply> {
    const params = admit(this.#target, request, dialect);
    const asked = params.task;
    const ttl = isObject(asked) ? asked.ttl : undefined;
    if (
      !isObject(asked) || (ttl !== undefined && !(Number.isInteger(ttl) && (ttl as number) >= 0))
    ) {
      throw new McpError(
        ErrorCode.INVALID_PARAMS,
        "Invalid params: task must be { ttl?: integer }",
      );
    }
    const record = this.record(sessionOwner(session), ttl as number | undefined);
    // Its messages go to the session, not to the stream of the request that created it.
    const background: Exchange = {
      session,
      transport: exchange.transport,
      headers: exchange.headers,
      assigns: exchange.assigns,
      authInfo: exchange.authInfo,
    };
    const cancellation = new Cancellation();
    const frameTask: FrameTask = {
      id: record.id,
      ask: (send) => this.#ask(record.id, send, notify),
    };
    const frame = legacyFrame(this.#target.server, {
      session,
      exchange: background,
      request,
      cancellation,
      task: frameTask,
    });
    const name = params.name as string;
    const tool = (await visibleTools(this.#target.server, frame)).get(name);
    if (!tool) throw unknownTool(this.#target.server, frame, name);
    if ((tool.execution?.taskSupport ?? "forbidden") === "forbidden") {
      throw new McpError(ErrorCode.METHOD_NOT_FOUND, `Tool ${name} cannot be called as a task`);
    }
    const send = emitter(background, session);
    const notify = (task: TaskRecord) =>
      void send({
        jsonrpc: "2.0",
        method: "notifications/tasks/status",
        params: wireTask(task),
      }).catch(() => {});
    await this.create(record);
    this.run(record, cancellation, () => serve(frame), "failed", notify);
    return { message: resultResponse(request.id, { task: wireTask(record) }), status: 200 };
  }

  /** A new `working` task of an owner, leased to this instance. */
  record(owner: string, ttl?: number): TaskRecord {
    const now = Date.now();
    const ttlMs = Math.min(ttl ?? DEFAULT_TTL_MS, MAX_TTL_MS);
    return {
      v: 1,
      id: crypto.randomUUID(),
      owner,
      method: "tools/call",
      status: "working",
      createdAt: now,
      updatedAt: now,
      ttlMs,
      expiresAt: now + ttlMs,
      pollIntervalMs: POLL_INTERVAL_MS,
      lease: { holder: this.#instance, expiresAt: now + LEASE_MS },
    };
  }

  /** Stores a new task (before its creation is answered). */
  async create(record: TaskRecord): Promise<void> {
    try {
      await this.#store.create(record);
    } catch (error) {
      if (error instanceof TaskLimitError) {
        throw new McpError(ErrorCode.TOO_MANY_TASKS, error.message, {
          scope: error.scope,
          limit: error.limit,
        });
      }
      logger.error("store.failed", `the task store refused task ${record.id}`, {
        taskId: record.id,
        error,
      });
      throw new McpError(ErrorCode.INTERNAL_ERROR, "The task could not be stored");
    }
  }

  /** Cancels the work of a task this instance runs, if it runs one. */
  cancel(id: string): void {
    this.#running.get(id)?.cancellation.cancel("The task was cancelled");
  }

  /**
   * Releases the tasks of a session that ended (DELETE, expiry): the ones
   * this instance runs are cancelled (their handlers' signals abort, their
   * input requests are rejected), and every one is removed from the store,
   * so the session's share is free again.
   */
  async releaseSession(session: Session): Promise<void> {
    const owner = sessionOwner(session);
    for (const id of this.#owned.get(owner) ?? []) {
      this.#running.get(id)?.cancellation.abort(abortError("The session ended"));
    }
    // Each page listed is deleted, so the next list starts at the next ones;
    // bounded, in case a store keeps listing what it was told to delete.
    for (let page = 0; page < 1_000; page++) {
      const { tasks } = await this.#store.list(owner, { limit: RELEASE_PAGE });
      if (!tasks.length) return;
      await Promise.all(tasks.map((task) => this.#store.delete(task.id)));
    }
  }

  /**
   * Runs a stored task's work to its end, in the background: holds its
   * lease meanwhile and stores its outcome.
   */
  run(
    record: TaskRecord,
    cancellation: Cancellation,
    work: () => Awaitable<Record<string, unknown> | undefined>,
    toolErrors: ToolErrorStatus,
    notify?: (task: TaskRecord) => void,
  ): void {
    const id = record.id;
    this.#running.set(id, {
      cancellation,
      record,
      renewAt: Date.now() + LEASE_MS / 3,
      notify,
    });
    let owned = this.#owned.get(record.owner);
    if (!owned) this.#owned.set(record.owner, owned = new Set());
    owned.add(id);
    this.#sweeper ??= setInterval(() => this.#sweep(), SWEEP_MS);
    (async () => {
      let outcome: TaskOutcome;
      try {
        const result = await work();
        if (!result) throw new Error("The task's request gave no result");
        // 2025-11-25: a tool error fails the task; `tasks/result` still gives the result.
        outcome = {
          status: result.isError === true ? toolErrors : "completed",
          result: json(result) as JsonObject,
        };
      } catch (error) {
        if (cancellation.aborted) outcome = { status: "cancelled" };
        else {
          const failure = McpError.from(error);
          outcome = {
            status: "failed",
            statusMessage: failure.message,
            error: json({
              code: failure.code,
              message: failure.message,
              data: failure.data as JsonValue | undefined,
            }),
          };
        }
      }
      const stored = await finishWithRetries(this.#store, id, outcome);
      if (stored?.status === outcome.status) notify?.(stored);
    })().finally(() => {
      this.#running.delete(id);
      owned.delete(id);
      if (owned.size === 0 && this.#owned.get(record.owner) === owned) {
        this.#owned.delete(record.owner);
      }
      if (this.#running.size === 0) {
        clearInterval(this.#sweeper);
        this.#sweeper = undefined;
      }
      this.#wake(id);
      cancellation.dispose();
    });
  }

  /**
   * One look through the tasks this instance runs, every `SWEEP_MS`: a task
   * whose ttl ran out ends (its handler's signal aborts, its input requests
   * are rejected, its record is removed), and leases due are renewed. One
   * timer for all of them, not one per task.
   */
  #sweep(): void {
    const now = Date.now();
    const due: string[] = [];
    for (const [id, task] of this.#running) {
      const expiresAt = task.record.expiresAt;
      if (expiresAt !== null && expiresAt <= now) {
        if (!task.cancellation.aborted) this.#expire(id, task, now);
      } else if (task.renewAt <= now) {
        task.renewAt = now + LEASE_MS / 3;
        due.push(id);
      }
    }
    if (!due.length) return;
    if (!this.#store.renew) {
      for (const id of due) this.#renew(id);
      return;
    }
    // A store that renews many at once gets them in one call.
    const lease = { holder: this.#instance, expiresAt: now + LEASE_MS };
    this.#store.renew(due, lease).then(
      (statuses) => due.forEach((id, i) => this.#renewed(id, statuses[i])),
      () => due.forEach((id) => this.#renew(id)),
    );
  }

  /** Ends a task whose ttl ran out while it ran: `failed`, and gone from the store. */
  #expire(id: string, task: Running, now: number): void {
    const message = "The task's ttl ran out before it ended";
    task.cancellation.abort(abortError(message));
    task.notify?.({
      ...task.record,
      status: "failed",
      statusMessage: message,
      updatedAt: now,
      error: { code: ErrorCode.INTERNAL_ERROR, message },
    });
    this.#store.delete(id).catch((error) =>
      logger.warn("store.failed", `the expired task ${id} was not deleted`, { taskId: id, error })
    );
  }

  /** Renews a task's lease alone (a store without `renew`, or a failed `renew`). */
  #renew(id: string): void {
    const lease = { holder: this.#instance, expiresAt: Date.now() + LEASE_MS };
    this.#store.update(id, { lease }).then(
      (now) => this.#renewed(id, now?.status),
      (error) =>
        logger.warn("store.failed", `the lease of task ${id} was not renewed`, {
          taskId: id,
          error,
        }),
    );
  }

  /** Renewing also learns of a cancel another instance stored (or of the task gone). */
  #renewed(id: string, status: TaskStatus | undefined): void {
    if (status === undefined || status === "cancelled") this.cancel(id);
  }

  /** One server-to-client request of a task: `input_required` while the client answers. */
  async #ask<T>(
    id: string,
    send: () => Promise<T>,
    notify: (task: TaskRecord) => void,
  ): Promise<T> {
    const asked = await this.#store.update(id, { status: "input_required" });
    if (asked?.status === "input_required") notify(asked);
    try {
      return await send();
    } finally {
      const resumed = await this.#store.update(id, { status: "working" }).catch(() => undefined);
      if (resumed?.status === "working") notify(resumed);
    }
  }

  #wake(id: string): void {
    const waiters = this.#waiters.get(id);
    this.#waiters.delete(id);
    for (const wake of waiters ?? []) wake();
  }

  /** A task of this owner, or the `-32602` an unknown id gets. */
  async owned(taskId: string, owner: string): Promise<TaskRecord> {
    const record = await this.#store.get(taskId);
    if (!record || record.owner !== owner) {
      throw new McpError(ErrorCode.INVALID_PARAMS, `Unknown task: ${taskId}`);
    }
    return await this.#orphaned(record) ?? record;
  }

  /** A running task whose instance died (its lease lapsed) fails, instead of working forever. */
  async #orphaned(record: TaskRecord): Promise<TaskRecord | undefined> {
    const lease = record.lease;
    if (isTerminal(record.status) || !lease || lease.expiresAt > Date.now()) return undefined;
    if (this.#running.has(record.id)) return undefined;
    const message = "The instance running the task stopped";
    return await this.#store.finish(record.id, {
      status: "failed",
      statusMessage: message,
      error: { code: ErrorCode.INTERNAL_ERROR, message },
    });
  }

  async #query(request: JsonRpcRequest, session: Session, dialect: Dialect): Promise<Reply> {
    const params = admit(this.#target, request, dialect);
    const owner = sessionOwner(session);
    const { id, method } = request;
    switch (method) {
      case "tasks/get": {
        const record = await this.owned(params.taskId as string, owner);
        return { message: resultResponse(id, wireTask(record)), status: 200 };
      }
      case "tasks/list": {
        let page;
        try {
          page = await this.#store.list(owner, {
            cursor: params.cursor as string | undefined,
            limit: this.#target.server.definition.pageSize ?? 50,
          });
        } catch {
          throw new McpError(ErrorCode.INVALID_PARAMS, "Invalid cursor");
        }
        const tasks = await Promise.all(page.tasks.map(async (r) => await this.#orphaned(r) ?? r));
        const result: Record<string, unknown> = { tasks: tasks.map(wireTask) };
        if (page.nextCursor !== undefined) result.nextCursor = page.nextCursor;
        return { message: resultResponse(id, result), status: 200 };
      }
      case "tasks/cancel": {
        const taskId = params.taskId as string;
        const record = await this.owned(taskId, owner);
        if (isTerminal(record.status)) {
          throw new McpError(
            ErrorCode.INVALID_PARAMS,
            `Task ${taskId} is already ${record.status}`,
          );
        }
        const ended = await this.#store.finish(taskId, { status: "cancelled" });
        if (ended?.status !== "cancelled") {
          throw new McpError(
            ErrorCode.INVALID_PARAMS,
            `Task ${taskId} is already ${ended?.status}`,
          );
        }
        this.cancel(taskId);
        return { message: resultResponse(id, wireTask(ended)), status: 200 };
      }
      case "tasks/result": {
        const taskId = params.taskId as string;
        const record = await this.#settled(await this.owned(taskId, owner), session);
        const related = { [MetaKey.relatedTask]: { taskId } };
        if (record.result) {
          const result = {
            ...record.result,
            _meta: { ...record.result._meta as object, ...related },
          };
          const encoded = dialect.encodeResult(
            "tools/call",
            result,
            encodeContext(this.#target.server),
          );
          return { message: resultResponse(id, encoded), status: 200 };
        }
        const error = record.error ??
          { code: ErrorCode.INTERNAL_ERROR, message: `Task ${taskId} was ${record.status}` };
        return {
          message: errorResponse(id, error.code, error.message, error.data),
          status: 200,
        };
      }
    }
    throw new McpError(ErrorCode.METHOD_NOT_FOUND, `Method not found: ${method}`);
  }

  /** Waits until a task is terminal: woken by this instance's runner, else by polling the store. */
  async #settled(record: TaskRecord, session: Session): Promise<TaskRecord> {
    let current: TaskRecord | undefined = record;
    while (current && !isTerminal(current.status as TaskStatus)) {
      if (session.closed) throw new McpError(ErrorCode.INTERNAL_ERROR, "The session closed");
      const id = current.id;
      await new Promise<void>((resolve) => {
        let waiters = this.#waiters.get(id);
        if (!waiters) this.#waiters.set(id, waiters = new Set());
        const done = () => {
          clearTimeout(timer);
          waiters!.delete(done);
          resolve();
        };
        const timer = setTimeout(done, current!.pollIntervalMs ?? POLL_INTERVAL_MS);
        waiters.add(done);
      });
      current = await this.#store.get(id);
      if (current) current = await this.#orphaned(current) ?? current;
    }
    if (!current) throw new McpError(ErrorCode.INVALID_PARAMS, `Unknown task: ${record.id}`);
    return current;
  }
}

/** Waits before each retry of a task's outcome write: about 7 s in all. */
const FINISH_RETRY_MS = [500, 1_500, 5_000];

/**
 * Stores a task's outcome, retrying a failed write a bounded number of times
 * (a store that is briefly unreachable, such as a restarting Redis, must not
 * lose an outcome whose task was answered as created). `finish` keeps the
 * first outcome, so a write that failed late but landed is not rewritten.
 * A record too large for the store (`RangeError`) is not retried.
 */
async function finishWithRetries(
  store: TaskStore,
  id: string,
  outcome: TaskOutcome,
): Promise<TaskRecord | undefined> {
  for (let attempt = 0;; attempt++) {
    try {
      return await store.finish(id, outcome);
    } catch (error) {
      const last = attempt >= FINISH_RETRY_MS.length || error instanceof RangeError;
      if (last) {
        logger.error("store.failed", `the outcome of task ${id} was not stored`, {
          taskId: id,
          attempts: attempt + 1,
          error,
        });
        return undefined;
      }
      logger.warn("store.retrying", `the outcome of task ${id} is written again`, {
        taskId: id,
        attempt: attempt + 1,
        error,
      });
      await new Promise((resolve) => setTimeout(resolve, FINISH_RETRY_MS[attempt]));
    }
  }
}
