/**
 * Tasks stay within their bounds, over real HTTP against a `cli serve`
 * child (the task fixtures plus `await_input`, which waits for input that
 * never comes): every task counts toward the store's bounds whatever its
 * status, a caller over its share gets -32050 while others still create
 * tasks, a DELETEd session's tasks are released, and a task waiting for
 * input ends at its ttl with its handler aborted. Memory and KV stores.
 */

import assert from "node:assert/strict";
import { headers2026, initialize, post, request2026 } from "../helpers/http_helpers.ts";
import { type HttpServerProcess, startCli } from "../helpers/everything_http_server.ts";

type Obj = Record<string, unknown>;

const MODULE = "tests/helpers/tasks_bounds_server.ts";

/**
 * Runs a body against a `cli serve` child of the bounds server with `flags`,
 * its tasks in `store` (a KV file in a temp dir for `kv`), stopped afterwards.
 */
async function serving(
  flags: string[],
  body: (server: HttpServerProcess) => Promise<void>,
  store: "memory" | "kv" = "memory",
): Promise<void> {
  const dir = await Deno.makeTempDir();
  const storeFlags = store === "kv" ? ["--task-store", `kv:${dir}/tasks.kv`] : [];
  try {
    const server = await startCli(MODULE, ["--port", "0", ...storeFlags, ...flags]);
    try {
      await body(server);
    } finally {
      await server.stop();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** The JSON-RPC response of a POST, whether sent as JSON or on an SSE stream. */
async function answer(response: Response): Promise<Obj> {
  const text = await response.text();
  if (!response.headers.get("content-type")?.includes("text/event-stream")) {
    return JSON.parse(text);
  }
  return text.split("\n").filter((l) => l.startsWith("data: ") && l.length > 6)
    .map((l) => JSON.parse(l.slice(6)) as Obj)
    .find((m) => "result" in m || "error" in m)!;
}

/** A 2025-11-25 session of the server (declaring elicitation): its id and a JSON-RPC call. */
async function session(url: URL) {
  const id = await initialize(url.href, "2025-11-25", { elicitation: {} });
  let next = 0;
  const headers = { "mcp-session-id": id, "mcp-protocol-version": "2025-11-25" };
  const rpc = async (method: string, params: Obj): Promise<Obj & { id: number }> => {
    const sent = ++next;
    const body = await answer(
      await post(url.href, { jsonrpc: "2.0", id: sent, method, params }, headers),
    );
    assert.equal(body.id, sent, "the request id is echoed");
    return body as Obj & { id: number };
  };
  /** Creates a task of `name`; its task, or its error. */
  const task = async (name: string, args: Obj, ttl = 60_000) => {
    const body = await rpc("tools/call", { name, arguments: args, task: { ttl } });
    return body.error ? { error: body.error as Obj } : { task: (body.result as Obj).task as Obj };
  };
  const close = async () => {
    const response = await fetch(url, { method: "DELETE", headers });
    await response.body?.cancel();
    assert.equal(response.status, 200);
  };
  return { id, rpc, task, close };
}

/** What the server's `await_input` handlers saw when their waits ended. */
async function aborts(url: URL): Promise<{ label: string; aborted: boolean; reason: string }[]> {
  const probe = await session(url);
  const result = (await probe.rpc("tools/call", { name: "aborts", arguments: {} })).result as Obj;
  return JSON.parse((result.content as Obj[])[0].text as string);
}

/** Polls until `check` holds (at most `tries` times, 100 ms apart). */
async function eventually<T>(read: () => Promise<T>, check: (value: T) => boolean, tries = 100) {
  let value = await read();
  for (let i = 0; i < tries && !check(value); i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    value = await read();
  }
  return value;
}

/** Asserts a creation was refused with the clear -32050 error of `scope`. */
function assertRefused(
  created: { error?: Obj; task?: Obj },
  scope: "caller" | "total",
  limit: number,
) {
  assert.ok(created.error, `created ${JSON.stringify(created.task)}`);
  assert.equal(created.error.code, -32050);
  assert.match(created.error.message as string, /^Too many tasks/);
  assert.deepEqual(created.error.data, { scope, limit });
}

for (const store of ["memory", "kv"] as const) {
  Deno.test(`http tasks (${store}): a session over its share is refused with -32050; another session still creates tasks`, () =>
    serving(["--max-tasks", "40", "--max-tasks-per-caller", "5"], async ({ url }) => {
      const a = await session(url);
      // Running, waiting for input and completed tasks all count.
      const made = [
        await a.task("slow_compute", { seconds: 60 }),
        await a.task("await_input", { label: "a" }),
        await a.task("slow_compute", { seconds: 0 }),
        await a.task("slow_compute", { seconds: 60 }),
        await a.task("await_input", { label: "a" }),
      ];
      for (const created of made) assert.ok(created.task, JSON.stringify(created.error));
      const refused = await a.task("slow_compute", { seconds: 60 });
      assertRefused(refused, "caller", 5);
      const b = await session(url);
      const other = await b.task("slow_compute", { seconds: 60 });
      assert.equal(other.task?.status, "working");
      // The refused session's tasks are untouched.
      const listed = (await a.rpc("tasks/list", {})).result as Obj;
      assert.equal((listed.tasks as Obj[]).length, 5);
      await a.close();
      await b.close();
    }, store));

  Deno.test(`http tasks (${store}): a DELETEd session's tasks are cancelled and leave the store, so another session gets the room`, () =>
    serving(["--max-tasks", "8", "--max-tasks-per-caller", "4"], async ({ url }) => {
      const a = await session(url);
      const b = await session(url);
      for (let i = 0; i < 4; i++) {
        assert.ok((await a.task("await_input", { label: "deleted" })).task);
        assert.ok((await b.task("slow_compute", { seconds: 60 })).task);
      }
      // The store is full (of tasks waiting for input and running ones): a third session is refused.
      const c = await session(url);
      assertRefused(await c.task("slow_compute", { seconds: 60 }), "total", 8);
      await a.close();
      // A's four left the store: C can use its whole share.
      const created = await eventually(
        () => c.task("slow_compute", { seconds: 60 }),
        (created) => created.task !== undefined,
        20,
      );
      assert.ok(created.task, JSON.stringify(created.error));
      for (let i = 1; i < 4; i++) assert.ok((await c.task("slow_compute", { seconds: 60 })).task);
      assertRefused(await c.task("slow_compute", { seconds: 60 }), "caller", 4);
      // And A's handlers, waiting for input that never came, saw their signal abort.
      const seen = await eventually(
        () => aborts(url),
        (seen) => seen.filter((s) => s.label === "deleted").length === 4,
      );
      const deleted = seen.filter((s) => s.label === "deleted");
      assert.equal(deleted.length, 4);
      for (const s of deleted) {
        assert.deepEqual(s, { label: "deleted", aborted: true, reason: "The session ended" });
      }
      await b.close();
      await c.close();
    }, store));
}

Deno.test("http tasks: a task waiting for input that never comes ends at its ttl, its handler aborted", () =>
  serving([], async ({ url }) => {
    const a = await session(url);
    const created = await a.task("await_input", { label: "ttl" }, 1_000);
    const taskId = created.task?.taskId as string;
    assert.ok(taskId, JSON.stringify(created.error));
    const waiting = await eventually(
      () => a.rpc("tasks/get", { taskId }),
      (got) => (got.result as Obj | undefined)?.status === "input_required",
      20,
    );
    assert.equal((waiting.result as Obj).status, "input_required");
    // Past its ttl the task is gone (-32602, as an unknown id), and its handler was aborted.
    const gone = await eventually(
      () => a.rpc("tasks/get", { taskId }),
      (got) => got.error !== undefined,
      50,
    );
    assert.equal((gone.error as Obj).code, -32602);
    const seen = await eventually(
      () => aborts(url),
      (seen) => seen.some((s) => s.label === "ttl"),
      30,
    );
    assert.deepEqual(seen.filter((s) => s.label === "ttl"), [
      { label: "ttl", aborted: true, reason: "The task's ttl ran out before it ended" },
    ]);
    await a.close();
  }));

Deno.test("http tasks 2026-07-28: an anonymous caller over its share gets 429 and -32050 with its id", () =>
  serving(["--max-tasks", "20", "--max-tasks-per-caller", "2"], async ({ url }) => {
    const capabilities = { elicitation: {}, extensions: { "io.modelcontextprotocol/tasks": {} } };
    const call = async (id: number) =>
      await post(
        url.href,
        request2026(id, "tools/call", { name: "failing_job", arguments: {} }, {
          "io.modelcontextprotocol/clientCapabilities": capabilities,
        }),
        headers2026("tools/call", "failing_job"),
      );
    for (const id of [1, 2]) {
      const created = await call(id);
      assert.equal(created.status, 200);
      assert.equal(((await created.json()) as Obj & { result: Obj }).result.resultType, "task");
    }
    const refused = await call(3);
    assert.equal(refused.status, 429);
    const body = await refused.json() as Obj;
    assert.equal(body.id, 3);
    assert.equal((body.error as Obj).code, -32050);
    assert.deepEqual((body.error as Obj).data, { scope: "caller", limit: 2 });
    // A legacy session (another caller) is not affected.
    const a = await session(url);
    assert.ok((await a.task("slow_compute", { seconds: 60 })).task);
    await a.close();
  }));
