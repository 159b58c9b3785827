/**
 * Every resumed POST stream ends, against `cli serve --http` with a KV event
 * store (whose `tail()` follows a stream that has not ended): the stream of
 * a call its client cancelled, and of a call answered, close right after
 * their replay. And `eventStore: true`, which an old README offered, is
 * refused when the handler is made instead of answering 500 for an expired
 * session; the in-memory store answers an expired session with 404.
 */

import assert from "node:assert/strict";
import { defineServer } from "@anubis/core";
import { MemoryEventStore } from "@anubis/event-store-memory";
import { createHttpHandler } from "@anubis/transport-http";
import { initialize, post, SseReader, start } from "../helpers/http_helpers.ts";
import { startCli } from "../helpers/everything_http_server.ts";
import {
  callStreaming,
  nextMessage,
  readToEnd,
  resume,
  sessionHeaders,
} from "../helpers/stream_end.ts";

/** How long a test waits for a stream the server should end (a bound, not an expectation). */
const BOUND_MS = 20_000;

/**
 * Runs `body` against `cli serve` (the everything example, or `module`) with
 * a KV event store in a temp dir.
 */
async function withServer(
  body: (url: string) => Promise<void>,
  module = "examples/everything.ts",
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "anubis-stream-end-" });
  const server = await startCli(module, ["--port", "0", "--event-store", `kv:${dir}/events.kv`]);
  try {
    await body(server.url.href);
  } finally {
    await server.stop();
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("http: the POST stream of a call its client cancelled ends, and a resume closes after its replay", async () => {
  await withServer(async (url) => {
    const session = await initialize(url);
    const { reader } = await callStreaming(url, session, 7, "test_slow_operation", {
      seconds: 600,
    });
    const first = await nextMessage(reader);
    assert.equal(JSON.parse(first.data!).method, "notifications/progress");
    const cancel = await post(url, {
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: 7, reason: "the user pressed stop" },
    }, sessionHeaders(session));
    assert.equal(cancel.status, 202);
    await cancel.body?.cancel();
    const live = await readToEnd(reader, BOUND_MS);
    assert.equal(live.ended, true, "the POST's own stream ended");

    // As the official Python SDK does: resume the cancelled call's stream.
    const resumed = await resume(url, session, first.id!);
    assert.equal(resumed.status, 200);
    const replay = await readToEnd(new SseReader(resumed), BOUND_MS);
    assert.equal(replay.ended, true, "the resumed stream ended after its replay");
    for (const { message } of replay.messages) {
      assert.equal(message.method, "notifications/progress", "no response for a cancelled call");
    }
  });
});

Deno.test("http: a call that ignores its cancellation still ends its stream when its client cancels it", async () => {
  await withServer(async (url) => {
    const session = await initialize(url);
    const { reader } = await callStreaming(url, session, 9, "stubborn", {});
    const first = await nextMessage(reader);
    const cancel = await post(url, {
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: 9 },
    }, sessionHeaders(session));
    assert.equal(cancel.status, 202);
    await cancel.body?.cancel();
    const live = await readToEnd(reader, BOUND_MS);
    assert.equal(live.ended, true, "the POST's own stream ended");
    assert.deepEqual(live.messages, []);
    const resumed = await resume(url, session, first.id!);
    assert.equal(resumed.status, 200);
    const replay = await readToEnd(new SseReader(resumed), BOUND_MS);
    assert.equal(replay.ended, true, "the resumed stream ended after its (empty) replay");
    assert.deepEqual(replay.messages, []);
  }, "tests/helpers/stubborn_server.ts");
});

Deno.test("http: the POST stream of an answered call, resumed, replays and closes", async () => {
  await withServer(async (url) => {
    const session = await initialize(url);
    const { reader, primingId } = await callStreaming(
      url,
      session,
      8,
      "test_tool_with_progress",
      {},
    );
    const live = await readToEnd(reader, BOUND_MS);
    assert.equal(live.ended, true);
    const answer = live.messages.at(-1)!;
    assert.equal(answer.message.id, 8);
    assert.ok(answer.message.result);

    // From the priming event: the whole stream again, then the end.
    const fromStart = await readToEnd(
      new SseReader(await resume(url, session, primingId)),
      BOUND_MS,
    );
    assert.equal(fromStart.ended, true);
    assert.deepEqual(fromStart.messages, live.messages);

    // From the answer: nothing left, and the end at once.
    const afterAnswer = await resume(url, session, answer.id!);
    assert.equal(afterAnswer.status, 200);
    const rest = await readToEnd(new SseReader(afterAnswer), BOUND_MS);
    assert.equal(rest.ended, true);
    assert.deepEqual(rest.messages, []);
  });
});

Deno.test("http: eventStore true is refused when the handler is made, and the in-memory store answers an expired session with 404", async () => {
  const server = defineServer({ name: "s", version: "1.0.0" });
  for (const wrong of [true, {}, "memory"]) {
    assert.throws(
      () => createHttpHandler(server, { eventStore: wrong as never }),
      (error: unknown) =>
        error instanceof TypeError && /new MemoryEventStore\(\)/.test(error.message),
    );
  }

  const served = start({ eventStore: new MemoryEventStore(), sessionIdleMs: 100 }, server);
  try {
    const session = await initialize(served.url);
    // The session expires (idle 100 ms; the table sweeps at most once a second).
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    const ping = await post(served.url, { jsonrpc: "2.0", id: 5, method: "ping" }, {
      ...sessionHeaders(session),
    });
    assert.equal(ping.status, 404);
    assert.deepEqual((await ping.json()).id, 5);
    const get = await fetch(served.url, {
      headers: { ...sessionHeaders(session), accept: "text/event-stream" },
    });
    assert.equal(get.status, 404);
    await get.body?.cancel();
    const resumed = await resume(served.url, session, "1-1");
    assert.equal(resumed.status, 404);
    await resumed.body?.cancel();
  } finally {
    await served.close();
  }
});
