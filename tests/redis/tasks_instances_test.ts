/**
 * Tasks across two HTTP instances on one Redis (2026-07-28, tasks extension):
 * a task created at one instance is polled, answered and cancelled at the
 * other, and the cancel reaches the handler running at the first (its lease
 * sweep's `renew` reports it).
 */

import assert from "node:assert/strict";
import { defineServer, defineTool } from "@anubis/core";
import { openRedis, RedisTaskStore } from "@anubis/redis";
import { taskTools } from "../../examples/everything/task_tools.ts";
import { headers2026, post, request2026, start } from "../helpers/http_helpers.ts";
import { redisAvailable, startRedis } from "../helpers/redis_server.ts";

type Obj = Record<string, unknown>;

let aborted = 0;
const server = defineServer({
  name: "tasks",
  version: "1.0.0",
  tools: [
    ...taskTools,
    defineTool({
      name: "until_cancelled",
      description: "Runs until its task is cancelled",
      inputSchema: { type: "object", properties: {} },
      execution: { taskSupport: "optional" },
      handler: (_args: Obj, frame) =>
        new Promise<string>((_resolve, reject) => {
          const timer = setTimeout(() => reject(new Error("never cancelled")), 60_000);
          frame.signal.addEventListener("abort", () => {
            clearTimeout(timer);
            aborted++;
            reject(frame.signal.reason);
          }, { once: true });
        }),
    }),
  ],
});

const auth = {
  verifyToken: (token: string) => Promise.resolve({ subject: token, scopes: [] }),
  authorizationServers: ["https://issuer.test"],
};

function client(url: string, token: string) {
  let id = 100;
  const capabilities = { elicitation: {}, extensions: { "io.modelcontextprotocol/tasks": {} } };
  return async (method: string, params: Obj): Promise<Obj> => {
    const headers = headers2026(method, (params.taskId ?? params.name) as string);
    headers.authorization = `Bearer ${token}`;
    const response = await post(
      url,
      request2026(++id, method, params, {
        "io.modelcontextprotocol/clientCapabilities": capabilities,
      }),
      headers,
    );
    return await response.json() as Obj;
  };
}

async function until(call: ReturnType<typeof client>, taskId: string, statuses: string[]) {
  for (let i = 0; i < 200; i++) {
    const task = (await call("tasks/get", { taskId })).result as Obj;
    if (statuses.includes(task.status as string)) return task;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`task ${taskId} never reached ${statuses}`);
}

Deno.test({
  name: "redis tasks: created at one instance, polled, answered and cancelled at another",
  ignore: !redisAvailable,
  async fn() {
    const redisServer = await startRedis();
    const [ra, rb] = [await openRedis(redisServer.url), await openRedis(redisServer.url)];
    const a = start({ auth, taskStore: new RedisTaskStore(ra) }, server);
    const b = start({ auth, taskStore: new RedisTaskStore(rb) }, server);
    try {
      const [atA, atB] = [client(a.url, "alice"), client(b.url, "alice")];
      // Input asked at A, answered at B, the task completes (at A) and reads so at B.
      const confirm = (await atA("tools/call", {
        name: "confirm_delete",
        arguments: { filename: "notes.txt" },
      })).result as Obj;
      assert.equal(confirm.resultType, "task");
      const waiting = await until(atB, confirm.taskId as string, ["input_required"]);
      const [key] = Object.keys(waiting.inputRequests as Obj);
      await atB("tasks/update", {
        taskId: confirm.taskId,
        inputResponses: { [key]: { action: "accept", content: { confirm: true } } },
      });
      const done = await until(atB, confirm.taskId as string, ["completed", "failed"]);
      assert.equal(done.status, "completed", JSON.stringify(done));
      // Another principal does not see it at either instance.
      const bob = client(b.url, "bob");
      assert.equal(
        ((await bob("tasks/get", { taskId: confirm.taskId })).error as Obj).code,
        -32602,
      );

      // Runs at A, cancelled at B: A's handler is aborted by its next lease renewal.
      const running = (await atA("tools/call", { name: "until_cancelled", arguments: {} }))
        .result as Obj;
      assert.equal((await until(atB, running.taskId as string, ["working"])).status, "working");
      await atB("tasks/cancel", { taskId: running.taskId });
      assert.equal((await until(atA, running.taskId as string, ["cancelled"])).status, "cancelled");
      for (let i = 0; i < 200 && aborted === 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50)); // within a lease sweep (5 s)
      }
      assert.equal(aborted, 1);
      assert.equal((await until(atA, running.taskId as string, ["cancelled"])).status, "cancelled");
    } finally {
      await a.close();
      await b.close();
      ra.close();
      rb.close();
      await redisServer.stop();
    }
  },
});
