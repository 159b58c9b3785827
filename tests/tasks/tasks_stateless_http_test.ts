/**
 * Tasks at 2026-07-28 over real Streamable HTTP (raw fetch): what the
 * stateless era answers for task-required tools and the removed core methods.
 */

import assert from "node:assert/strict";
import { headers2026, post, request2026, start } from "../helpers/http_helpers.ts";
import tasksServer from "../helpers/tasks_server.ts";

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
