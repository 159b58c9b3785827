/**
 * 2025-11-25 core tasks over real Streamable HTTP (the handler on
 * Deno.serve, raw fetch): bound to the session that created them, status
 * notifications on that session's GET stream, and earlier versions untouched.
 */

import assert from "node:assert/strict";
import { initialize, post, SseReader, start } from "../helpers/http_helpers.ts";
import tasksServer from "../helpers/tasks_server.ts";
import { MemoryTaskStore } from "@anubis/core";

type Obj = Record<string, unknown>;

/** The JSON-RPC response of a POST, whether sent as JSON or on an SSE stream. */
async function answer(response: Response): Promise<Obj> {
  const text = await response.text();
  if (!response.headers.get("content-type")?.includes("text/event-stream")) {
    return JSON.parse(text);
  }
  const messages = text.split("\n").filter((l) => l.startsWith("data: ") && l.length > 6)
    .map((l) => JSON.parse(l.slice(6)) as Obj);
  return messages.find((m) => "result" in m || "error" in m)!;
}

Deno.test("http 2025-11-25 tasks: bound to their session, status on the GET stream", async () => {
  const server = start({}, tasksServer);
  try {
    const a = await initialize(server.url, "2025-11-25");
    const b = await initialize(server.url, "2025-11-25");
    const as = (id: string) => ({ "mcp-session-id": id, "mcp-protocol-version": "2025-11-25" });
    const rpc = async (session: string, id: number, method: string, params: Obj) =>
      await answer(await post(server.url, { jsonrpc: "2.0", id, method, params }, as(session)));

    const stream = await fetch(server.url, {
      headers: { accept: "text/event-stream", ...as(a) },
    });
    assert.equal(stream.status, 200);
    const events = new SseReader(stream);

    const created = await rpc(a, 1, "tools/call", {
      name: "slow_compute",
      arguments: { seconds: 0.3, label: "http" },
      task: { ttl: 30_000 },
    });
    const task = (created.result as Obj).task as Obj;
    const taskId = task.taskId as string;
    assert.equal(task.status, "working");
    assert.equal(task.ttl, 30_000);

    // Another session gets the answer an unknown id gets.
    const other = await rpc(b, 2, "tasks/get", { taskId });
    assert.equal((other.error as Obj).code, -32602);
    assert.equal(((await rpc(b, 3, "tasks/cancel", { taskId })).error as Obj).code, -32602);
    assert.equal(((await rpc(b, 4, "tasks/result", { taskId })).error as Obj).code, -32602);
    assert.deepEqual((await rpc(b, 5, "tasks/list", {})).result, { tasks: [] });

    const result = await rpc(a, 6, "tasks/result", { taskId });
    assert.deepEqual((result.result as Obj).content, [
      { type: "text", text: "Computed http after 0.3s" },
    ]);
    const listed = (await rpc(a, 7, "tasks/list", {})).result as Obj;
    assert.deepEqual((listed.tasks as Obj[]).map((t) => [t.taskId, t.status]), [
      [taskId, "completed"],
    ]);

    // The status change reached the creating session's standalone stream.
    let seen = false;
    for (let i = 0; i < 20 && !seen; i++) {
      const event = await events.next();
      if (!event?.data) continue;
      const message = JSON.parse(event.data) as Obj;
      if (message.method !== "notifications/tasks/status") continue;
      assert.equal((message.params as Obj).taskId, taskId);
      assert.equal((message.params as Obj).status, "completed");
      seen = true;
    }
    assert.ok(seen, "no notifications/tasks/status on the GET stream");
    await events.cancel();
  } finally {
    await server.close();
  }
});

Deno.test("http 2025-06-18: no tasks there (the task hint is ignored, tasks/* is -32601)", async () => {
  const server = start({}, tasksServer);
  try {
    const session = await initialize(server.url, "2025-06-18");
    const headers = { "mcp-session-id": session, "mcp-protocol-version": "2025-06-18" };
    const called = await answer(
      await post(server.url, {
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "slow_compute", arguments: { seconds: 0 }, task: {} },
      }, headers),
    );
    assert.deepEqual((called.result as Obj).content, [
      { type: "text", text: "Computed result after 0s" },
    ]);
    const get = await answer(
      await post(server.url, {
        jsonrpc: "2.0",
        id: 2,
        method: "tasks/get",
        params: { taskId: "x" },
      }, headers),
    );
    assert.equal((get.error as Obj).code, -32601);
  } finally {
    await server.close();
  }
});

Deno.test("http: createHttpHandler keeps tasks in the task store it is given", async () => {
  const taskStore = new MemoryTaskStore();
  const server = start({ taskStore }, tasksServer);
  try {
    const session = await initialize(server.url, "2025-11-25");
    const created = await answer(
      await post(server.url, {
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "slow_compute", arguments: { seconds: 0 }, task: {} },
      }, { "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" }),
    );
    const taskId = ((created.result as Obj).task as Obj).taskId as string;
    const stored = await taskStore.get(taskId);
    assert.equal(stored?.owner, `session:${session}`);
    assert.equal(stored?.method, "tools/call");
  } finally {
    await server.close();
  }
});

Deno.test("http: a task whose instance died (lease lapsed) is failed, not working forever", async () => {
  const taskStore = new MemoryTaskStore();
  const server = start({ taskStore }, tasksServer);
  try {
    const session = await initialize(server.url, "2025-11-25");
    const now = Date.now();
    // What a dead instance left behind: running, its lease lapsed.
    await taskStore.create({
      v: 1,
      id: "orphan",
      owner: `session:${session}`,
      method: "tools/call",
      status: "working",
      createdAt: now - 60_000,
      updatedAt: now - 60_000,
      ttlMs: 600_000,
      expiresAt: now + 540_000,
      lease: { holder: "a-dead-instance", expiresAt: now - 1 },
    });
    const headers = { "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" };
    const rpc = async (id: number, method: string) =>
      await answer(
        await post(
          server.url,
          { jsonrpc: "2.0", id, method, params: { taskId: "orphan" } },
          headers,
        ),
      );
    const got = (await rpc(1, "tasks/get")).result as Obj;
    assert.equal(got.status, "failed");
    assert.equal(got.statusMessage, "The instance running the task stopped");
    assert.equal(((await rpc(2, "tasks/result")).error as Obj).code, -32603);
  } finally {
    await server.close();
  }
});
