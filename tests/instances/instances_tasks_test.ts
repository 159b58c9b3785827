/**
 * Tasks across instances: two `cli serve --http` processes sharing one KV
 * file (`--session-store kv:PATH --task-store kv:PATH`). A task created on A
 * is polled, awaited and cancelled on B; a task whose instance was killed is
 * `failed` on B once its lease lapsed. At 2026-07-28 (the tasks extension) a
 * task created on A waits for input, is answered on B and completes, and a
 * task whose instance was killed is `failed` on B within the lease.
 */

import assert from "node:assert/strict";
import { startCli } from "../helpers/everything_http_server.ts";
import { headers2026, initialize, post, request2026 } from "../helpers/http_helpers.ts";
import { LEASE_MS } from "../../core/_task_runtime.ts";

type Obj = Record<string, unknown>;

async function answer(response: Response): Promise<Obj> {
  const text = await response.text();
  if (!response.headers.get("content-type")?.includes("text/event-stream")) return JSON.parse(text);
  return text.split("\n").filter((l) => l.startsWith("data: ") && l.length > 6)
    .map((l) => JSON.parse(l.slice(6)) as Obj).find((m) => "result" in m || "error" in m)!;
}

/** Polls `status` every 500 ms while it says `working`, for at most 30 s (two leases): the last. */
async function pastTheLease(status: () => Promise<unknown>): Promise<unknown> {
  let last: unknown = "working";
  for (let i = 0; i < 60 && last === "working"; i++) {
    await new Promise((r) => setTimeout(r, 500));
    last = await status();
  }
  return last;
}

/** The `_meta` of a 2026-07-28 client with elicitation and the tasks extension. */
const META_TASKS = {
  "io.modelcontextprotocol/clientCapabilities": {
    elicitation: {},
    extensions: { "io.modelcontextprotocol/tasks": {} },
  },
};

let id2026 = 0;

/** A 2026-07-28 request to one instance: its result. */
async function rpc2026(url: URL, method: string, params: Obj): Promise<Obj> {
  const body = request2026(++id2026, method, params, META_TASKS);
  const headers = headers2026(method, (params.taskId ?? params.name) as string);
  return (await answer(await post(url.href, body, headers))).result as Obj;
}

/** Two instances of the task server on one KV file for tasks (and `flags`). */
async function twoInstances(dir: string, flags: string[] = []) {
  const all = ["--port", "0", "--task-store", `kv:${dir}/a.kv`, ...flags];
  return [
    await startCli("tests/helpers/tasks_server.ts", all),
    await startCli("tests/helpers/tasks_server.ts", all),
  ];
}

Deno.test("instances: a task created on A is polled, awaited and cancelled on B; A killed -> failed", async () => {
  const dir = await Deno.makeTempDir();
  const [a, b] = await twoInstances(dir, ["--session-store", `kv:${dir}/a.kv`]);
  try {
    const session = await initialize(a.url.href, "2025-11-25");
    const headers = { "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" };
    const rpc = async (url: URL, id: number, method: string, params: Obj) =>
      await answer(await post(url.href, { jsonrpc: "2.0", id, method, params }, headers));
    const call = async (id: number, args: Obj) =>
      (((await rpc(a.url, id, "tools/call", {
        name: "slow_compute",
        arguments: args,
        task: {},
      })).result as Obj).task as Obj).taskId as string;

    const quick = await call(1, { seconds: 0.3, label: "shared" });
    assert.equal(
      ((await rpc(b.url, 2, "tasks/get", { taskId: quick })).result as Obj).taskId,
      quick,
    );
    const result = (await rpc(b.url, 3, "tasks/result", { taskId: quick })).result as Obj;
    assert.deepEqual(result.content, [{ type: "text", text: "Computed shared after 0.3s" }]);

    const slow = await call(4, { seconds: 60 });
    const cancelled = (await rpc(b.url, 5, "tasks/cancel", { taskId: slow })).result as Obj;
    assert.equal(cancelled.status, "cancelled");
    assert.equal(
      ((await rpc(a.url, 6, "tasks/get", { taskId: slow })).result as Obj).status,
      "cancelled",
    );

    // A dies mid-task: B reports the task failed once A's lease lapsed (15 s).
    const orphan = await call(7, { seconds: 120 });
    await a.stop("SIGKILL");
    let polls = 8;
    const status = await pastTheLease(async () =>
      ((await rpc(b.url, polls++, "tasks/get", { taskId: orphan })).result as Obj).status
    );
    assert.equal(status, "failed");
  } finally {
    await a.stop();
    await b.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("instances 2026-07-28: a task created on A asks for input, is answered and cancelled on B", async () => {
  const dir = await Deno.makeTempDir();
  const [a, b] = await twoInstances(dir);
  const rpc = rpc2026;
  try {
    const until = async (url: URL, taskId: string, status: string) => {
      for (let i = 0; i < 100; i++) {
        const task = await rpc(url, "tasks/get", { taskId });
        if (task.status === status) return task;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`task ${taskId} never ${status}`);
    };

    const created = await rpc(a.url, "tools/call", {
      name: "confirm_delete",
      arguments: { filename: "shared.txt" },
    });
    assert.equal(created.resultType, "task");
    const taskId = created.taskId as string;
    const waiting = await until(b.url, taskId, "input_required");
    const [key] = Object.keys(waiting.inputRequests as Obj);
    await rpc(b.url, "tasks/update", {
      taskId,
      inputResponses: { [key]: { action: "accept", content: { confirm: true } } },
    });
    const done = await until(b.url, taskId, "completed");
    assert.deepEqual((done.result as Obj).content, [{ type: "text", text: "Deleted shared.txt" }]);

    const slow = (await rpc(a.url, "tools/call", {
      name: "slow_compute",
      arguments: { seconds: 60 },
    })).taskId as string;
    assert.equal((await rpc(b.url, "tasks/cancel", { taskId: slow })).resultType, "complete");
    assert.equal((await rpc(a.url, "tasks/get", { taskId: slow })).status, "cancelled");
  } finally {
    await a.stop();
    await b.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("instances 2026-07-28: A killed mid-task -> the task is failed on B once the lease lapsed", async () => {
  const dir = await Deno.makeTempDir();
  const [a, b] = await twoInstances(dir);
  try {
    const createdAt = Date.now();
    const created = await rpc2026(a.url, "tools/call", {
      name: "slow_compute",
      arguments: { seconds: 120 },
    });
    assert.equal(created.resultType, "task");
    const taskId = created.taskId as string;
    assert.equal((await rpc2026(b.url, "tasks/get", { taskId })).status, "working");
    await a.stop("SIGKILL");
    const killedAt = Date.now();
    let task: Obj = {};
    const status = await pastTheLease(async () =>
      (task = await rpc2026(b.url, "tasks/get", { taskId })).status
    );
    assert.equal(status, "failed", JSON.stringify(task));
    // Not before the lease A took at creation lapsed, and soon after.
    const failedAt = Date.now();
    assert.ok(failedAt - createdAt >= LEASE_MS - 500, `failed ${failedAt - createdAt} ms in`);
    assert.ok(failedAt - killedAt <= LEASE_MS + 2_000, `failed ${failedAt - killedAt} ms on`);
    assert.match((task.error as Obj).message as string, /instance running the task stopped/);
    // Failed for good: a cancel finds it ended, another read still says failed.
    await rpc2026(b.url, "tasks/cancel", { taskId });
    assert.equal((await rpc2026(b.url, "tasks/get", { taskId })).status, "failed");
  } finally {
    await a.stop();
    await b.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
