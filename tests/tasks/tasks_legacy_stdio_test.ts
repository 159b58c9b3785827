/**
 * 2025-11-25 core tasks over real stdio, driven by the official SDK v1
 * client's task support (`client.experimental.tasks`).
 */

import assert from "node:assert/strict";
import { serveParams } from "../helpers/stdio_child.ts";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";

type Obj = Record<string, unknown>;

async function connect(elicited: Obj[]) {
  const client = new Client({ name: "sdk-v1", version: "1.0.0" }, {
    capabilities: { elicitation: {} },
  });
  client.setRequestHandler(ElicitRequestSchema, (request: { params: Obj }) => {
    elicited.push(request.params);
    return { action: "accept", content: { confirm: true } };
  });
  await client.connect(new StdioClientTransport(serveParams("tests/helpers/tasks_server.ts")));
  return client;
}

async function until(client: Client, taskId: string, done: (status: string) => boolean) {
  for (let i = 0; i < 200; i++) {
    const task = await client.experimental.tasks.getTask(taskId);
    if (done(task.status)) return task;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`task ${taskId} never settled`);
}

Deno.test("sdk v1 over stdio at 2025-11-25: tasks capability, create, poll, result, list, cancel", async () => {
  const elicited: Obj[] = [];
  const client = await connect(elicited);
  try {
    assert.deepEqual(client.getServerCapabilities()?.tasks, {
      list: {},
      cancel: {},
      requests: { tools: { call: {} } },
    });
    const { tools } = await client.listTools();
    const support = Object.fromEntries(
      tools.map((t: Obj) => [t.name, (t.execution as Obj | undefined)?.taskSupport]),
    );
    assert.deepEqual(support.slow_compute, "optional");
    assert.deepEqual(support.failing_job, "required");
    assert.equal(support.greet, undefined);

    // The same handler answers directly when called without a task.
    assert.deepEqual(
      (await client.callTool({ name: "slow_compute", arguments: { seconds: 0, label: "now" } }))
        .content,
      [{ type: "text", text: "Computed now after 0s" }],
    );

    // Task-augmented: CreateTaskResult, then tasks/result waits for the outcome.
    const created = await client.request({
      method: "tools/call",
      params: {
        name: "slow_compute",
        arguments: { seconds: 0.2, label: "x" },
        task: { ttl: 60_000 },
      },
    }, CreateTaskResultSchema);
    const task = created.task;
    assert.equal(task.status, "working");
    assert.equal(task.ttl, 60_000);
    assert.ok(!Number.isNaN(Date.parse(task.createdAt)));
    const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    assert.deepEqual(result.content, [{ type: "text", text: "Computed x after 0.2s" }]);
    assert.deepEqual(result._meta?.["io.modelcontextprotocol/related-task"], {
      taskId: task.taskId,
    });
    assert.equal((await client.experimental.tasks.getTask(task.taskId)).status, "completed");

    // A tool error fails the task; tasks/result still gives the tool's result.
    const failing = await client.request({
      method: "tools/call",
      params: { name: "failing_job", arguments: {}, task: {} },
    }, CreateTaskResultSchema);
    const failed = await client.experimental.tasks.getTaskResult(
      failing.task.taskId,
      CallToolResultSchema,
    );
    assert.equal(failed.isError, true);
    assert.equal((await client.experimental.tasks.getTask(failing.task.taskId)).status, "failed");

    // A protocol error: tasks/result answers that JSON-RPC error.
    const broken = await client.request({
      method: "tools/call",
      params: { name: "protocol_error_job", arguments: {}, task: {} },
    }, CreateTaskResultSchema);
    await assert.rejects(
      client.experimental.tasks.getTaskResult(broken.task.taskId, CallToolResultSchema),
      (e: { code?: number; message?: string }) => e.code === -32603,
    );

    // Elicitation inside a task: input_required while asked, tagged with the task.
    const asking = await client.request({
      method: "tools/call",
      params: { name: "confirm_delete", arguments: { filename: "a.txt" }, task: {} },
    }, CreateTaskResultSchema);
    const deleted = await client.experimental.tasks.getTaskResult(
      asking.task.taskId,
      CallToolResultSchema,
    );
    assert.deepEqual(deleted.content, [{ type: "text", text: "Deleted a.txt" }]);
    assert.deepEqual(
      (elicited[0]._meta as Obj)["io.modelcontextprotocol/related-task"],
      { taskId: asking.task.taskId },
    );

    // Cancellation reaches the handler's signal; the task stays cancelled.
    const slow = await client.request({
      method: "tools/call",
      params: { name: "slow_compute", arguments: { seconds: 60 }, task: {} },
    }, CreateTaskResultSchema);
    const cancelled = await client.experimental.tasks.cancelTask(slow.task.taskId);
    assert.equal(cancelled.status, "cancelled");
    assert.equal((await until(client, slow.task.taskId, () => true)).status, "cancelled");
    await assert.rejects(
      client.experimental.tasks.cancelTask(slow.task.taskId),
      (e: { code?: number }) => e.code === -32602,
    );

    const listed = await client.experimental.tasks.listTasks();
    assert.deepEqual(
      listed.tasks.map((t: { taskId: string }) => t.taskId),
      [task.taskId, failing.task.taskId, broken.task.taskId, asking.task.taskId, slow.task.taskId],
    );
  } finally {
    await client.close();
  }
});

Deno.test("sdk v1 over stdio at 2025-11-25: -32601 and -32602 where the spec puts them", async () => {
  const client = await connect([]);
  try {
    const code = (p: Promise<unknown>) => p.then(() => undefined, (e: { code?: number }) => e.code);
    // A forbidden tool called as a task, a required one called without.
    assert.equal(
      await code(client.request({
        method: "tools/call",
        params: { name: "greet", arguments: { name: "x" }, task: {} },
      }, CreateTaskResultSchema)),
      -32601,
    );
    assert.equal(
      await code(client.callTool({ name: "failing_job", arguments: {} })),
      -32601,
    );
    assert.equal(
      await code(client.request({
        method: "tools/call",
        params: { name: "slow_compute", arguments: { seconds: 0 }, task: { ttl: "soon" } },
      }, CreateTaskResultSchema)),
      -32602,
    );
    assert.equal(await code(client.experimental.tasks.getTask("nope")), -32602);
    assert.equal(await code(client.experimental.tasks.cancelTask("nope")), -32602);
    assert.equal(await code(client.experimental.tasks.listTasks("bogus-cursor")), -32602);
    assert.deepEqual((await client.experimental.tasks.listTasks()).tasks, []);
  } finally {
    await client.close();
  }
});
