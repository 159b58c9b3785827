/**
 * The 2026-07-28 tasks extension over real stdio (raw wire: no official
 * client speaks it yet): create, poll, answer the task's input, complete;
 * cancel; the removed core methods.
 */

import assert from "node:assert/strict";
import { start } from "../helpers/stdio_child.ts";

type Obj = Record<string, unknown>;

const META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {
    elicitation: {},
    extensions: { "io.modelcontextprotocol/tasks": {} },
  },
};

Deno.test("stdio 2026-07-28: a task asks for input, is answered with tasks/update, completes; cancel", async () => {
  const server = start("tests/helpers/tasks_server.ts");
  let id = 0;
  const rpc = async (method: string, params: Obj): Promise<Obj> => {
    const sent = ++id;
    await server.send(
      JSON.stringify({ jsonrpc: "2.0", id: sent, method, params: { ...params, _meta: META } }) +
        "\n",
    );
    return await server.next((m) => m.id === sent);
  };
  const until = async (taskId: string, status: string) => {
    for (let i = 0; i < 100; i++) {
      const task = (await rpc("tasks/get", { taskId })).result as Obj;
      if (task.status === status) return task;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`task ${taskId} never ${status}`);
  };
  try {
    const created = (await rpc("tools/call", {
      name: "confirm_delete",
      arguments: { filename: "pipe.txt" },
    })).result as Obj;
    assert.equal(created.resultType, "task");
    const taskId = created.taskId as string;
    const waiting = await until(taskId, "input_required");
    const [key] = Object.keys(waiting.inputRequests as Obj);
    const ack = (await rpc("tasks/update", {
      taskId,
      inputResponses: { [key]: { action: "accept", content: { confirm: false } } },
    })).result as Obj;
    assert.equal(ack.resultType, "complete");
    const done = await until(taskId, "completed");
    assert.deepEqual((done.result as Obj).content, [{ type: "text", text: "Kept pipe.txt" }]);

    const slow = ((await rpc("tools/call", { name: "slow_compute", arguments: { seconds: 60 } }))
      .result as Obj).taskId as string;
    assert.equal(
      ((await rpc("tasks/cancel", { taskId: slow })).result as Obj).resultType,
      "complete",
    );
    assert.equal((await until(slow, "cancelled")).status, "cancelled");
    for (const method of ["tasks/list", "tasks/result"]) {
      const answer = await rpc(method, method === "tasks/list" ? {} : { taskId: slow });
      assert.equal((answer.error as Obj).code, -32601, method);
    }
  } finally {
    const { code } = await server.close();
    assert.equal(code, 0);
  }
});
