/**
 * Failover of a session's stored stream between `cli serve --http` processes
 * on one KV file: change notifications raised by another session on the
 * survivor while the session's only live stream was on a killed instance are
 * recorded all the same, and a resume on any instance reads each once.
 */

import assert from "node:assert/strict";
import { until } from "../helpers/everything_answers.ts";
import { initialize, post, SseReader } from "../helpers/http_helpers.ts";
import { type Instance, startInstance } from "../helpers/instances_process.ts";

const VERSION = "2025-11-25";

/** Opens the session's GET stream at `url` (resuming after `lastEventId`). */
async function openStream(url: string, sessionId: string, lastEventId?: string) {
  const headers: Record<string, string> = {
    accept: "text/event-stream",
    "mcp-session-id": sessionId,
    "mcp-protocol-version": VERSION,
  };
  if (lastEventId !== undefined) headers["last-event-id"] = lastEventId;
  const response = await fetch(url, { headers });
  assert.equal(response.status, 200);
  return new SseReader(response);
}

/** Has session `sessionId` raise a tool list change at `url` (`test_trigger_tool_change`). */
async function raise(url: string, sessionId: string, id: number): Promise<void> {
  const response = await post(url, {
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name: "test_trigger_tool_change", arguments: {} },
  }, { "mcp-session-id": sessionId, "mcp-protocol-version": VERSION });
  assert.equal(response.status, 200);
  assert.ok(((await response.json()) as { result?: unknown }).result);
}

/** Reads list changes from `reader` into `seen` until the stream ends or fails. */
async function readAll(reader: SseReader, seen: number[]): Promise<void> {
  try {
    for (let event = await reader.next(); event; event = await reader.next()) {
      if (!event.data) continue;
      assert.equal(JSON.parse(event.data).method, "notifications/tools/list_changed");
      seen.push(Number(event.id));
    }
  } catch {
    // The connection died with its process, or the test cancelled it.
  }
}

Deno.test("instances: changes raised while the session's only stream was on a killed instance are not lost", async () => {
  const dir = await Deno.makeTempDir({ prefix: "anubis-failover-" });
  const kvPath = `${dir}/a.kv`;
  const running: Instance[] = [];
  try {
    const a = await startInstance(kvPath);
    running.push(a);
    const b = await startInstance(kvPath);
    running.push(b);
    // S watches on A; T, which only ever talks to B, raises the changes.
    const watcher = await initialize(a.url, VERSION);
    const raiser = await initialize(b.url, VERSION);
    const seen: number[] = [];
    const onA = await openStream(a.url, watcher);
    assert.equal((await onA.next())?.data, ""); // priming
    const readingA = readAll(onA, seen);
    let raised = 0;
    for (; raised < 5; raised++) await raise(b.url, raiser, raised);
    await until(() => seen.length === 5);

    await a.stop("SIGKILL");
    await readingA;
    for (; raised < 25; raised++) await raise(b.url, raiser, raised);

    // S resumes on B, which never held it, and reads what A's death would have lost.
    const onB = await openStream(b.url, watcher, String(seen.at(-1)));
    const readingB = readAll(onB, seen);
    await until(() => seen.length >= 25);
    // A restarted raises more: S now lives only on B.
    const restarted = await startInstance(kvPath);
    running.push(restarted);
    for (; raised < 30; raised++) await raise(restarted.url, raiser, raised);
    await until(() => seen.length >= 30);
    await onB.cancel();
    await readingB;
    assert.equal(seen.length, raised, `each change once: ${JSON.stringify(seen)}`);
    assert.equal(new Set(seen).size, seen.length);
    assert.ok(seen.every((id, i) => i === 0 || id > seen[i - 1]), JSON.stringify(seen));
  } finally {
    for (const instance of running) await instance.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
