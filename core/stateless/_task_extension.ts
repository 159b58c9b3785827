/**
 * The tasks extension of the stateless era (SEP-2663,
 * `io.modelcontextprotocol/tasks`): a `tools/call` whose request declared the
 * extension may be answered with a task (`resultType: "task"`) that the
 * client polls with `tasks/get`, answers with `tasks/update` and cancels with
 * `tasks/cancel`. The task model, store, runner and leases are those of the
 * 2025-11-25 tasks ({@link TaskRuntime}); only the wire and the way a task
 * asks for input differ: its input requests wait in the task
 * (`input_required`, `inputRequests`) until `tasks/update` answers them.
 *
 * @module
 */

import { principalOf } from "../auth_info.ts";
import { isThenable } from "../awaitable.ts";
import { Cancellation } from "../cancellation.ts";
import type { Dialect } from "../dialect.ts";
import { admit } from "../_methods/dispatch.ts";
import { ErrorCode, McpError } from "../errors.ts";
import type { Exchange } from "../exchange.ts";
import type { Reply } from "../reply.ts";
import type { Frame } from "../frame.ts";
import { type JsonRpcRequest, resultResponse } from "../json_rpc.ts";
import { MetaKey } from "../meta.ts";
import { encodeContext, errorReply } from "../reply.ts";
import * as s from "../schema.ts";
import type { Awaitable } from "../awaitable.ts";
import { statelessFrame, type TaskHooks } from "./_frame.ts";
import { TaskInputs } from "./_task_inputs.ts";
import { isTerminal, type TaskRecord } from "../task_store.ts";
import type { TaskRuntime } from "../_task_runtime.ts";
import type { JsonObject } from "../types.ts";

/** The extension's identifier. */
export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";

/** The extension's methods (`tasks/list` and `tasks/result` are gone from it). */
const TASK_METHODS = new Set(["tasks/get", "tasks/update", "tasks/cancel"]);

type Result = Record<string, unknown>;

/** Whether a stateless request declared the extension in its `_meta` client capabilities. */
function declaresTasks(request: JsonRpcRequest): boolean {
  const meta = request.params?._meta as Record<string, unknown> | undefined;
  const capabilities = meta?.[MetaKey.clientCapabilities] as
    | { extensions?: Record<string, unknown> }
    | undefined;
  const declared = capabilities?.extensions?.[TASKS_EXTENSION];
  return typeof declared === "object" && declared !== null;
}

function missingExtension(what: string): McpError {
  return new McpError(
    ErrorCode.MISSING_REQUIRED_CLIENT_CAPABILITY,
    `${what}: declare the ${TASKS_EXTENSION} extension`,
    { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
  );
}

/**
 * Whose a stateless request's tasks are: its principal's when it is
 * authenticated; else anyone's who holds the (unguessable) task id.
 */
function ownerOf(authInfo: unknown): string {
  const principal = principalOf(authInfo);
  return principal === undefined ? ANONYMOUS : `principal:${principal}`;
}

/** The owner of an unauthenticated caller's tasks (anyone holding the id may see them). */
const ANONYMOUS = "anonymous";

/** The task as the extension's wire shows it: `Task`, or `DetailedTask` with its payload. */
function wireTask(record: TaskRecord, detail?: (result: JsonObject) => Result): Result {
  const task: Result = { taskId: record.id, status: record.status };
  if (record.statusMessage !== undefined) task.statusMessage = record.statusMessage;
  task.createdAt = new Date(record.createdAt).toISOString();
  task.lastUpdatedAt = new Date(record.updatedAt).toISOString();
  task.ttlMs = record.ttlMs;
  if (record.pollIntervalMs !== undefined) task.pollIntervalMs = record.pollIntervalMs;
  if (!detail) return task;
  switch (record.status) {
    case "input_required":
      task.inputRequests = record.inputRequests ?? {};
      break;
    case "completed":
      if (record.result) task.result = detail(record.result);
      break;
    case "failed":
      task.error = record.error ??
        { code: ErrorCode.INTERNAL_ERROR, message: record.statusMessage ?? "The task failed" };
  }
  return task;
}

/** Sends a task's new state to the listen streams that asked for it. */
export type TaskDelivery = (taskId: string, task: Result) => void;

/** The tasks extension of one engine. */
export class TaskExtension {
  readonly #runtime: TaskRuntime;
  readonly #deliver: TaskDelivery;
  // The input waits of the tasks this instance runs, by task id.
  readonly #inputs = new Map<string, TaskInputs>();

  constructor(runtime: TaskRuntime, deliver: TaskDelivery) {
    this.#runtime = runtime;
    this.#deliver = deliver;
  }

  /**
   * The tasks a `subscriptions/listen` request may hear of: those of its
   * `taskIds` that are the caller's (`-32021` when the request did not
   * declare the extension).
   */
  async listenable(
    request: JsonRpcRequest,
    authInfo: unknown,
    taskIds: string[],
  ): Promise<string[]> {
    if (!declaresTasks(request)) throw missingExtension("Task notifications");
    const owner = ownerOf(authInfo);
    const records = await Promise.all(
      taskIds.map((id) => this.#runtime.store.get(id).catch(() => undefined)),
    );
    return taskIds.filter((_, i) => records[i]?.owner === owner);
  }

  /** Tells the listen streams of a task's new state (`notifications/tasks`). */
  changed(record: TaskRecord | undefined, dialect: Dialect): void {
    if (!record) return;
    this.#deliver(record.id, wireTask(record, this.#inlined(dialect)));
  }

  /** How a completed task's result is inlined: as the call would have answered it. */
  #inlined(dialect: Dialect): (result: JsonObject) => Result {
    const server = this.#runtime.target.server;
    return (result) => dialect.encodeResult("tools/call", result, encodeContext(server));
  }

  /**
   * Serves a stateless request when it is the extension's (`tasks/get`,
   * `tasks/update`, `tasks/cancel`) or a task-required `tools/call` the
   * request cannot get (`-32021`); `undefined` otherwise.
   */
  serve(
    request: JsonRpcRequest,
    exchange: Exchange,
    dialect: Dialect,
  ): Promise<Reply> | Reply | undefined {
    const method = request.method;
    if (method === "tools/call") {
      const name = request.params?.name;
      if (typeof name !== "string" || this.#runtime.support(name) !== "required") return undefined;
      if (declaresTasks(request)) return undefined;
      return errorReply(request, missingExtension(`Tool ${name} runs only as a task`), "stateless");
    }
    if (!TASK_METHODS.has(method)) return undefined;
    if (!declaresTasks(request)) {
      return errorReply(request, missingExtension(`${method} is a tasks method`), "stateless");
    }
    return this.#query(request, exchange, dialect).catch((error) =>
      errorReply(request, error, "stateless")
    );
  }

  /**
   * What lets a `tools/call` become a task: for a request that declared the
   * extension, of a task-capable tool (the frame's `startTask` and the race
   * of the request's answer with the task's creation); `undefined` otherwise.
   */
  starter(request: JsonRpcRequest, exchange: Exchange, dialect: Dialect): TaskStarter | undefined {
    if (request.method !== "tools/call" || !declaresTasks(request)) return undefined;
    // Only a tool that declares task support (a static one) may become a task.
    const name = request.params?.name;
    if (typeof name !== "string" || this.#runtime.support(name) === "forbidden") return undefined;
    return new TaskStarter(this, request, exchange, dialect);
  }

  /** The runtime. */
  get runtime(): TaskRuntime {
    return this.#runtime;
  }

  /** The input waits of a task this instance starts running. */
  inputsOf(id: string, dialect: Dialect): TaskInputs {
    const inputs = new TaskInputs(
      this.#runtime.store,
      id,
      (record) => this.changed(record, dialect),
    );
    this.#inputs.set(id, inputs);
    return inputs;
  }

  /** Forgets a task's input waits once it ended. */
  forget(id: string): void {
    this.#inputs.delete(id);
  }

  async #query(request: JsonRpcRequest, exchange: Exchange, dialect: Dialect): Promise<Reply> {
    const runtime = this.#runtime;
    const server = runtime.target.server;
    const params = admit(runtime.target, request, dialect, dialect.requestMetaSchema);
    const taskId = params.taskId as string;
    const record = await runtime.owned(taskId, ownerOf(exchange.authInfo));
    let result: Result = {};
    switch (request.method) {
      case "tasks/get":
        result = wireTask(record, this.#inlined(dialect));
        break;
      case "tasks/update":
        await this.#answer(record, params.inputResponses as Result, dialect);
        break;
      case "tasks/cancel":
        // Idempotent: a task already ended keeps its outcome, and the ack is the same.
        if (!isTerminal(record.status)) {
          const ended = await runtime.store.finish(taskId, { status: "cancelled" });
          runtime.cancel(taskId);
          if (ended?.status === "cancelled") this.changed(ended, dialect);
        }
        break;
    }
    const encoded = dialect.encodeResult(request.method, result, encodeContext(server));
    return { message: resultResponse(request.id, encoded), status: 200 };
  }

  /**
   * Stores the answers to a task's outstanding input requests (others are
   * ignored), and drops them from what the task waits for at once, so the
   * next `tasks/get` shows only what is still outstanding.
   */
  async #answer(record: TaskRecord, responses: Result, dialect: Dialect): Promise<void> {
    const outstanding = record.inputRequests ?? {};
    if (isTerminal(record.status)) return;
    const answers: JsonObject = {};
    for (const [key, answer] of Object.entries(responses)) {
      const asked = outstanding[key] as { method?: string } | undefined;
      if (!asked || record.inputResponses?.[key] !== undefined) continue;
      const schema = asked.method ? dialect.requestResultSchema(asked.method) : undefined;
      if (schema && !s.validate(schema, answer).ok) {
        throw new McpError(ErrorCode.INVALID_PARAMS, `Invalid params: inputResponses.${key}`);
      }
      answers[key] = answer as JsonObject[string];
    }
    const keys = Object.keys(answers);
    if (!keys.length) return;
    const remaining = Object.fromEntries(
      Object.entries(outstanding).filter(([key]) => !keys.includes(key)),
    ) as JsonObject;
    const waiting = Object.keys(remaining).length > 0;
    const updated = await this.#runtime.store.update(record.id, {
      inputResponses: answers,
      inputRequests: waiting ? remaining : null,
      status: waiting ? "input_required" : "working",
    });
    this.#inputs.get(record.id)?.wake();
    this.changed(updated, dialect);
  }
}

/** A promise with its settlers. */
function deferred<T>(): { promise: Promise<T>; resolve(value: T): void; reject(e: unknown): void } {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((ok, fail) => (resolve = ok, reject = fail));
  return { promise, resolve, reject };
}

/**
 * Turns one `tools/call` into a task when its handler (or the engine for
 * it) calls `frame.runAsTask()`: the task is stored, the request is answered
 * with it, and the call's own outcome becomes the task's.
 */
export class TaskStarter {
  readonly #extension: TaskExtension;
  readonly #request: JsonRpcRequest;
  readonly #exchange: Exchange;
  readonly #dialect: Dialect;
  readonly #created = deferred<Result>();
  readonly #outcome = deferred<Result | undefined>();
  /** The request frame's hook. */
  readonly hooks: TaskHooks = { startTask: (work) => this.#start(work) };

  constructor(
    extension: TaskExtension,
    request: JsonRpcRequest,
    exchange: Exchange,
    dialect: Dialect,
  ) {
    this.#extension = extension;
    this.#request = request;
    this.#exchange = exchange;
    this.#dialect = dialect;
    // Followed only once a task started; a call answered directly leaves it alone.
    this.#outcome.promise.catch(() => {});
  }

  /**
   * Serves the request: its own answer, or the created task when the call
   * became one first (its answer then becomes the task's outcome).
   */
  settle(serve: () => Awaitable<Result | undefined>): Awaitable<Result | undefined> {
    let answer: Awaitable<Result | undefined>;
    try {
      answer = serve();
    } catch (error) {
      return Promise.reject(error);
    }
    if (!isThenable(answer)) return answer;
    const settled = Promise.resolve(answer);
    settled.then(this.#outcome.resolve, this.#outcome.reject);
    return Promise.race([settled, this.#created.promise]);
  }

  async #start<T>(work: (frame: Frame) => Awaitable<T>): Promise<T> {
    const extension = this.#extension;
    const runtime = extension.runtime;
    const exchange = this.#exchange;
    const record = runtime.record(ownerOf(exchange.authInfo));
    // An anonymous caller's share is its client's (its address), not everyone's.
    if (record.owner === ANONYMOUS && exchange.client !== undefined) {
      record.caller = `client:${exchange.client}`;
    }
    await runtime.create(record);
    const id = record.id;
    const cancellation = new Cancellation();
    const inputs = extension.inputsOf(id, this.#dialect);
    const frame = statelessFrame(runtime.target.server, {
      dialect: this.#dialect,
      request: this.#request,
      exchange: {
        transport: exchange.transport,
        headers: exchange.headers,
        assigns: exchange.assigns,
        authInfo: exchange.authInfo,
        // No emit: progress and logs have no stream in a task.
      },
      cancellation,
      inputs: undefined,
      hooks: { request: (method, params, signal) => inputs.ask(method, params, signal) },
    });
    runtime.run(
      record,
      cancellation,
      () => this.#outcome.promise.finally(() => extension.forget(id)),
      "completed",
      (ended) => extension.changed(ended, this.#dialect),
    );
    this.#created.resolve({ resultType: "task", ...wireTask(record) });
    return await work(frame);
  }
}
