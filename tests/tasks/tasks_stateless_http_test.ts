/**
 * Tasks at 2026-07-28 over real Streamable HTTP (raw fetch): what the
 * stateless era answers for task-required tools and the removed core methods.
 */

import assert from "node:assert/strict";
import { headers2026, post, request2026, SseReader, start } from "../helpers/http_helpers.ts";
import tasksServer from "../helpers/tasks_server.ts";
import { captureLog, type LogCapture } from "../helpers/log_capture.ts";
import { MemoryTaskStore, type TaskOutcome, type TaskPatch, type TaskRecord } from "@anubis/core";

type Obj = Record<string, unknown>;

Deno.test("http 2026-07-28: a task-required tool without the tasks extension is -32021 (400)", async () => {
  const server = start({}, tasksServer);
  try {
    const response = await post(
      server.url,
      request2026(1, "tools/call", { name: "failing_job", arguments: {} }),
      headers2026("tools/call", "failing_job"),
    );
    assert.equal(response.status, 400);
    const body = await response.json() as Obj;
    assert.equal(body.id, 1);
    const error = body.error as Obj;
    assert.equal(error.code, -32021);
    assert.deepEqual(error.data, {
      requiredCapabilities: { extensions: { "io.modelcontextprotocol/tasks": {} } },
    });
    // An optional one answers directly, and the core task methods are gone (404, -32601).
    const direct = await post(
      server.url,
      request2026(2, "tools/call", { name: "slow_compute", arguments: { seconds: 0 } }),
      headers2026("tools/call", "slow_compute"),
    );
    assert.equal(direct.status, 200);
    assert.deepEqual(((await direct.json()) as Obj & { result: Obj }).result.content, [
      { type: "text", text: "Computed result after 0s" },
    ]);
    for (const method of ["tasks/list", "tasks/result"]) {
      const gone = await post(
        server.url,
        request2026(3, method, method === "tasks/list" ? {} : { taskId: "x" }),
        headers2026(method),
      );
      assert.equal(gone.status, 404);
      assert.equal(((await gone.json()) as { error: Obj }).error.code, -32601);
    }
  } finally {
    await server.close();
  }
});

/** Runs a body against a fresh tasks server over HTTP, closed afterwards. */
async function serving(
  options: Parameters<typeof start>[0],
  body: (url: string) => Promise<void>,
): Promise<void> {
  const server = start(options, tasksServer);
  try {
    await body(server.url);
  } finally {
    await server.close();
  }
}

/** A caller of the tasks extension over HTTP: every request declares it (and elicitation). */
function tasksClient(url: string, token?: string) {
  let id = 100;
  const capabilities = {
    elicitation: {},
    extensions: { "io.modelcontextprotocol/tasks": {} },
  };
  return async (method: string, params: Obj, name?: string): Promise<Obj> => {
    const headers = headers2026(method, name ?? (params.taskId ?? params.name) as string);
    if (token) headers.authorization = `Bearer ${token}`;
    const response = await post(
      url,
      request2026(++id, method, params, {
        "io.modelcontextprotocol/clientCapabilities": capabilities,
      }),
      headers,
    );
    const body = await response.json() as Obj;
    assert.equal(body.id, id);
    return body;
  };
}

/** Polls `tasks/get` until the task has one of the statuses. */
async function until(
  call: ReturnType<typeof tasksClient>,
  taskId: string,
  statuses: string[],
): Promise<Obj> {
  for (let i = 0; i < 100; i++) {
    const task = (await call("tasks/get", { taskId })).result as Obj;
    if (statuses.includes(task.status as string)) return task;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`task ${taskId} never reached ${statuses}`);
}

// Two principals: the token is the subject.
const auth = {
  verifyToken: (token: string) => Promise.resolve({ subject: token, scopes: [] }),
  authorizationServers: ["https://issuer.test"],
};

Deno.test("http 2026-07-28: a task is created, asks for input, resumes on tasks/update and completes", () =>
  serving({ auth }, async (url) => {
    const alice = tasksClient(url, "alice");
    const created = (await alice("tools/call", {
      name: "confirm_delete",
      arguments: { filename: "notes.txt" },
    })).result as Obj;
    assert.equal(created.resultType, "task");
    assert.equal(created.status, "working");
    assert.equal(typeof created.ttlMs, "number");
    assert.equal(typeof created.pollIntervalMs, "number");
    for (const key of ["requestState", "inputRequests", "result", "task", "ttl"]) {
      assert.equal(key in created, false, key);
    }
    const taskId = created.taskId as string;
    // Resolvable at once (stored before the answer), working or already waiting.
    const first = (await alice("tasks/get", { taskId })).result as Obj;
    assert.equal(first.resultType, "complete");
    assert.equal(first.taskId, taskId);
    assert.ok(["working", "input_required"].includes(first.status as string));
    const waiting = await until(alice, taskId, ["input_required"]);
    const keys = Object.keys(waiting.inputRequests as Obj);
    assert.equal(keys.length, 1);
    const asked = (waiting.inputRequests as Record<string, Obj>)[keys[0]];
    assert.equal(asked.method, "elicitation/create");
    assert.equal((asked.params as Obj).message, "Delete notes.txt?");
    const ack = await alice("tasks/update", {
      taskId,
      inputResponses: {
        [keys[0]]: { action: "accept", content: { confirm: true } },
        "never-asked": { action: "decline" },
      },
    });
    assert.deepEqual(Object.keys(ack.result as Obj).sort(), ["_meta", "resultType"]);
    const done = await until(alice, taskId, ["completed", "failed", "cancelled"]);
    assert.equal(done.status, "completed");
    assert.deepEqual((done.result as Obj).content, [{ type: "text", text: "Deleted notes.txt" }]);
    assert.equal("inputRequests" in done, false);
    // The answered key is spent: answering it again changes nothing.
    const again = await alice("tasks/update", {
      taskId,
      inputResponses: { [keys[0]]: { action: "decline" } },
    });
    assert.equal((again.result as Obj).resultType, "complete");
    assert.equal(((await alice("tasks/get", { taskId })).result as Obj).status, "completed");
  }));

Deno.test("http 2026-07-28: two inputs at once are answered one by one (partial tasks/update)", () =>
  serving({}, async (url) => {
    const call = tasksClient(url);
    const { taskId } = (await call("tools/call", { name: "multi_input", arguments: {} }))
      .result as { taskId: string };
    let task = await until(call, taskId, ["input_required"]);
    while (Object.keys(task.inputRequests as Obj).length < 2) {
      task = (await call("tasks/get", { taskId })).result as Obj;
    }
    const [one, two] = Object.keys(task.inputRequests as Obj);
    assert.notEqual(one, two);
    await call("tasks/update", { taskId, inputResponses: { [one]: { action: "decline" } } });
    const partly = (await call("tasks/get", { taskId })).result as Obj;
    assert.equal(partly.status, "input_required");
    assert.deepEqual(Object.keys(partly.inputRequests as Obj), [two]);
    await call("tasks/update", {
      taskId,
      inputResponses: { [two]: { action: "accept", content: { confirm: true } } },
    });
    const done = await until(call, taskId, ["completed", "failed", "cancelled"]);
    assert.deepEqual((done.result as Obj).content, [
      { type: "text", text: "first=decline, second=accept" },
    ]);
  }));

Deno.test("http 2026-07-28: tasks/cancel is idempotent; tool and protocol errors end completed and failed", () =>
  serving({}, async (url) => {
    const call = tasksClient(url);
    const { taskId } = (await call("tools/call", {
      name: "slow_compute",
      arguments: { seconds: 60 },
    })).result as { taskId: string };
    for (let i = 0; i < 2; i++) {
      const ack = await call("tasks/cancel", { taskId });
      assert.deepEqual(Object.keys(ack.result as Obj).sort(), ["_meta", "resultType"]);
      assert.equal((ack.result as Obj).resultType, "complete");
    }
    assert.equal((await until(call, taskId, ["cancelled"])).status, "cancelled");
    const failing = (await call("tools/call", { name: "failing_job", arguments: {} }))
      .result as { taskId: string };
    const toolError = await until(call, failing.taskId, ["completed", "failed"]);
    assert.equal(toolError.status, "completed");
    assert.equal((toolError.result as Obj).isError, true);
    const broken = (await call("tools/call", { name: "protocol_error_job", arguments: {} }))
      .result as { taskId: string };
    const failed = await until(call, broken.taskId, ["completed", "failed"]);
    assert.equal(failed.status, "failed");
    assert.deepEqual(failed.error, { code: -32603, message: "The job broke down" });
    assert.equal("result" in failed, false);
    // An unknown id is -32602 for every method.
    for (const method of ["tasks/get", "tasks/update", "tasks/cancel"]) {
      const params = method === "tasks/update"
        ? { taskId: "nope", inputResponses: {} }
        : { taskId: "nope" };
      assert.equal(((await call(method, params)).error as Obj).code, -32602, method);
    }
  }));

Deno.test("http 2026-07-28: another principal sees an unknown task; an undeclared request gets -32021", () =>
  serving({ auth }, async (url) => {
    const alice = tasksClient(url, "alice");
    const bob = tasksClient(url, "bob");
    const { taskId } = (await alice("tools/call", {
      name: "slow_compute",
      arguments: { seconds: 60 },
    })).result as { taskId: string };
    for (const method of ["tasks/get", "tasks/update", "tasks/cancel"]) {
      const params = method === "tasks/update" ? { taskId, inputResponses: {} } : { taskId };
      const error = (await bob(method, params)).error as Obj;
      assert.equal(error.code, -32602, method);
      assert.equal(error.message, `Unknown task: ${taskId}`);
    }
    assert.equal(((await alice("tasks/get", { taskId })).result as Obj).status, "working");
    // Without the extension declared: -32021 (HTTP 400) naming it.
    const undeclared = await post(
      url,
      request2026(7, "tasks/get", { taskId }),
      { ...headers2026("tasks/get", taskId), authorization: "Bearer alice" },
    );
    assert.equal(undeclared.status, 400);
    const error = ((await undeclared.json()) as { error: Obj }).error;
    assert.equal(error.code, -32021);
    assert.deepEqual(error.data, {
      requiredCapabilities: { extensions: { "io.modelcontextprotocol/tasks": {} } },
    });
    await alice("tasks/cancel", { taskId });
  }));

Deno.test("http 2026-07-28: notifications/tasks reach a listen stream that asked for the caller's task", () =>
  serving({ auth }, async (url) => {
    const alice = tasksClient(url, "alice");
    const { taskId } = (await alice("tools/call", {
      name: "confirm_delete",
      arguments: { filename: "a.txt" },
    })).result as { taskId: string };
    const waiting = await until(alice, taskId, ["input_required"]);
    const [key] = Object.keys(waiting.inputRequests as Obj);
    const extension = {
      "io.modelcontextprotocol/clientCapabilities": {
        extensions: { "io.modelcontextprotocol/tasks": {} },
      },
    };
    const listen = (token: string, meta: Obj) =>
      post(
        url,
        request2026("L1", "subscriptions/listen", { notifications: { taskIds: [taskId] } }, meta),
        { ...headers2026("subscriptions/listen"), authorization: `Bearer ${token}` },
      );
    // Asking for task notifications without the extension: -32021.
    const undeclared = await listen("alice", {});
    assert.equal(undeclared.status, 400);
    assert.equal(((await undeclared.json()) as { error: Obj }).error.code, -32021);
    // Another principal's stream is not given the task.
    const other = new SseReader(await listen("bob", extension));
    const otherAck = await other.message();
    assert.deepEqual((otherAck.params as Obj).notifications, {});
    await other.cancel();
    const stream = new SseReader(await listen("alice", extension));
    const ack = await stream.message();
    assert.equal(ack.method, "notifications/subscriptions/acknowledged");
    assert.deepEqual((ack.params as Obj).notifications, { taskIds: [taskId] });
    await alice("tasks/update", {
      taskId,
      inputResponses: { [key]: { action: "accept", content: { confirm: true } } },
    });
    let note: Obj;
    do {
      note = await stream.message();
      assert.equal(note.method, "notifications/tasks");
      const params = note.params as Obj;
      assert.equal(params.taskId, taskId);
      assert.deepEqual(params._meta, { "io.modelcontextprotocol/subscriptionId": "L1" });
    } while ((note.params as Obj).status !== "completed");
    assert.deepEqual(((note.params as Obj).result as Obj).content, [
      { type: "text", text: "Deleted a.txt" },
    ]);
    await stream.cancel();
  }));

/** A task store that fails the operations named in `failing`. */
class FailingTaskStore extends MemoryTaskStore {
  constructor(readonly failing: Set<"create" | "input" | "finish" | "lease">) {
    super();
  }
  override create(record: TaskRecord): Promise<void> {
    if (this.failing.has("create")) return Promise.reject(new Error("store down: create"));
    return super.create(record);
  }
  override update(id: string, patch: TaskPatch): Promise<TaskRecord | undefined> {
    if (this.failing.has("input") && patch.status === "input_required") {
      return Promise.reject(new Error("store down: update"));
    }
    if (this.failing.has("lease") && patch.lease !== undefined) {
      return Promise.reject(new Error("store down: lease"));
    }
    return super.update(id, patch);
  }
  override finish(id: string, outcome: TaskOutcome): Promise<TaskRecord | undefined> {
    if (this.failing.has("finish") && outcome.status === "completed") {
      return Promise.reject(new Error("store down: finish"));
    }
    return super.finish(id, outcome);
  }
}

/** The log's records once `count` are written (each checked for `time`, which is removed). */
async function records(log: LogCapture, count: number): Promise<Obj[]> {
  for (let i = 0; i < 100 && log.lines.length < count; i++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return log.records().map(({ time, ...rest }) => {
    assert.equal(typeof time, "string");
    return rest;
  });
}

Deno.test("http 2026-07-28: a task store's failures are each one event with the task id (an outcome write retried), never the arguments", async () => {
  const secret = "argument-never-logged.txt";
  const log = captureLog();
  try {
    const failing = new Set<"create" | "input" | "finish">(["create"]);
    await serving({ taskStore: new FailingTaskStore(failing) }, async (url) => {
      const call = tasksClient(url);
      const refused = await call("tools/call", {
        name: "confirm_delete",
        arguments: { filename: secret },
      });
      assert.equal((refused.error as Obj).code, -32603);
      const [created] = await records(log, 1);
      const taskId = created.taskId as string;
      assert.match(taskId, /./);
      assert.deepEqual(created, {
        level: "error",
        event: "store.failed",
        msg: `the task store refused task ${taskId}`,
        taskId,
        error: "store down: create",
      });

      failing.clear();
      failing.add("finish");
      const finished = (await call("tools/call", {
        name: "slow_compute",
        arguments: { seconds: 0 },
      })).result as Obj;
      // A failed outcome write is retried (a store that is briefly down loses no
      // outcome): one warning, then the store is back and the task completes.
      const second = (await records(log, 2))[1];
      assert.deepEqual(second, {
        level: "warn",
        event: "store.retrying",
        msg: `the outcome of task ${finished.taskId} is written again`,
        taskId: finished.taskId,
        attempt: 1,
        error: "store down: finish",
      });
      failing.clear();
      assert.equal(
        (await until(call, finished.taskId as string, ["completed", "failed"])).status,
        "completed",
      );

      failing.clear();
      failing.add("input");
      const asking = (await call("tools/call", {
        name: "confirm_delete",
        arguments: { filename: secret },
      })).result as Obj;
      const third = (await records(log, 3))[2];
      assert.deepEqual(third, {
        level: "error",
        event: "store.failed",
        msg: `task ${asking.taskId} was not updated`,
        taskId: asking.taskId,
        error: "store down: update",
      });
      await call("tasks/cancel", { taskId: asking.taskId });
      await until(call, asking.taskId as string, ["cancelled"]);
    });
    assert.equal(log.lines.length, 3, log.lines.join("\n"));
    for (const line of log.lines) assert.doesNotMatch(line, new RegExp(secret));
  } finally {
    log.restore();
  }
});

Deno.test("http 2026-07-28: a lease the store does not renew is a store.failed warning with the task id; the task runs on", async () => {
  const log = captureLog();
  try {
    const store = new FailingTaskStore(new Set(["lease"]));
    await serving({ taskStore: store }, async (url) => {
      const call = tasksClient(url);
      const task = (await call("tools/call", {
        name: "slow_compute",
        arguments: { seconds: 6 },
      })).result as Obj;
      const taskId = task.taskId as string;
      // The lease is renewed every third of LEASE_MS (15 s): the first renewal after 5 s.
      for (let i = 0; i < 150 && log.lines.length === 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const [renewal] = await records(log, 1);
      assert.deepEqual(renewal, {
        level: "warn",
        event: "store.failed",
        msg: `the lease of task ${taskId} was not renewed`,
        taskId,
        error: "store down: lease",
      });
      assert.equal(((await call("tasks/get", { taskId })).result as Obj).status, "working");
      await call("tasks/cancel", { taskId });
      await until(call, taskId, ["cancelled"]);
    });
  } finally {
    log.restore();
  }
});
