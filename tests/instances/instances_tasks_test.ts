/**
 * Tasks across instances: two `cli serve --http` processes sharing one KV
 * file (`--session-store kv:PATH --task-store kv:PATH`). A task created on A
 * is polled, awaited and cancelled on B; a task whose instance was killed is
 * `failed` on B once its lease lapsed.
 */

import assert from "node:assert/strict";
import { startCli } from "../helpers/everything_http_server.ts";
import { initialize, post } from "../helpers/http_helpers.ts";

type Obj = Record<string, unknown>;

async function answer(response: Response): Promise<Obj> {
  const text = await response.text();
  if (!response.headers.get("content-type")?.includes("text/event-stream")) return JSON.parse(text);
  return text.split("\n").filter((l) => l.startsWith("data: ") && l.length > 6)
    .map((l) => JSON.parse(l.slice(6)) as Obj).find((m) => "result" in m || "error" in m)!;
}

Deno.test("instances: a task created on A is polled, awaited and cancelled on B; A killed -> failed", async () => {
  const dir = await Deno.makeTempDir();
  const flags = [
    "--port",
    "0",
    "--session-store",
    `kv:${dir}/a.kv`,
    "--task-store",
    `kv:${dir}/a.kv`,
  ];
  const a = await startCli("tests/helpers/tasks_server.ts", flags);
  const b = await startCli("tests/helpers/tasks_server.ts", flags);
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
    let status = "working";
    for (let i = 0; i < 60 && status === "working"; i++) {
      await new Promise((r) => setTimeout(r, 500));
      status = ((await rpc(b.url, 8 + i, "tasks/get", { taskId: orphan })).result as Obj)
        .status as string;
    }
    assert.equal(status, "failed");
  } finally {
    await a.stop();
    await b.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
