/**
 * Every resumed stream ends, across `cli serve --http` processes on one KV
 * file: a client resuming at B the POST stream of a request that runs at A
 * follows it while A lives (A beats in the store), and once A is killed gets
 * a `-32603` error response for its request id within the lease (10 s) and
 * a check, then the end of the stream; a later resume replays that error and
 * ends at once.
 */

import assert from "node:assert/strict";
import { type ParsedEvent, SseReader } from "../helpers/http_helpers.ts";
import { type Instance, startInstance } from "../helpers/instances_process.ts";
import { callStreaming, nextMessage, readToEnd, resume } from "../helpers/stream_end.ts";
import { initialize } from "../helpers/http_helpers.ts";

/** The transport's default lease (`DEFAULT_LEASE_MS` of transport-http/legacy/_post_stream.ts). */
const LEASE_MS = 10_000;

/**
 * Two instances on one KV file in a temp dir, a session opened at the first,
 * and a slow call (`test_slow_operation`, 600 s) as request `id` started
 * there; `body` gets them and the call's first progress event.
 */
async function withSlowCall(
  id: number,
  body: (
    a: Instance,
    b: Instance,
    session: string,
    call: { reader: SseReader; first: ParsedEvent },
  ) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "anubis-stream-end-" });
  const kvPath = `${dir}/a.kv`;
  const running: Instance[] = [];
  try {
    const a = await startInstance(kvPath);
    running.push(a);
    const b = await startInstance(kvPath);
    running.push(b);
    const session = await initialize(a.url);
    const { reader } = await callStreaming(a.url, session, id, "test_slow_operation", {
      seconds: 600,
    });
    await body(a, b, session, { reader, first: await nextMessage(reader) });
  } finally {
    for (const instance of running) await instance.stop();
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("instances: a resumed POST stream whose request's instance was killed ends with an error for its id", async () => {
  await withSlowCall(41, async (a, b, session, { reader: onA, first }) => {
    assert.equal(first.id?.includes("-"), true);
    await onA.cancel(); // the client drops the POST connection; the call goes on at A

    // Resumed at B while A runs: B follows what A records, past a whole lease.
    const resumed = await resume(b.url, session, first.id!);
    assert.equal(resumed.status, 200);
    const onB = new SseReader(resumed);
    const beforeKill: unknown[] = [];
    const leaseAndMore = performance.now() + LEASE_MS + 3_000;
    while (performance.now() < leaseAndMore) {
      beforeKill.push(JSON.parse((await nextMessage(onB)).data!).method);
    }
    assert.ok(beforeKill.length > 10, "progress kept arriving from A through B");
    assert.ok(beforeKill.every((method) => method === "notifications/progress"));

    const killedAt = performance.now();
    await a.stop("SIGKILL");
    // Bounded: the lease, a check, and slack for two loaded cores.
    const rest = await readToEnd(onB, 4 * LEASE_MS);
    assert.equal(rest.ended, true, "the resumed stream ended");
    const last = rest.messages.at(-1)?.message as {
      id?: unknown;
      error?: { code?: number; message?: string };
    };
    assert.equal(last?.id, 41, JSON.stringify(last));
    assert.equal(last.error?.code, -32603);
    assert.match(last.error?.message ?? "", /instance stopped before answering/);
    for (const { message } of rest.messages.slice(0, -1)) {
      assert.equal(message.method, "notifications/progress");
    }
    console.error(
      `SIGKILL to the end of the resumed stream: ${Math.round(rest.at - killedAt)} ms`,
    );

    // The error is recorded: resuming again replays it and ends at once.
    const again = await resume(b.url, session, first.id!);
    assert.equal(again.status, 200);
    const replayed = await readToEnd(new SseReader(again), 20_000);
    assert.equal(replayed.ended, true);
    assert.deepEqual(replayed.messages.at(-1)?.message, last);
  });
});

Deno.test("instances: an instance stopped gently answers its running calls' streams with the error itself", async () => {
  await withSlowCall(42, async (a, b, session, { reader: onA, first }) => {
    const atA = readToEnd(onA, 4 * LEASE_MS);
    await a.stop("SIGTERM");
    const endAtA = await atA;
    assert.equal(endAtA.ended, true);
    assert.deepEqual(endAtA.messages.at(-1)?.message.id, 42);
    assert.equal((endAtA.messages.at(-1)?.message.error as { code?: number })?.code, -32603);

    // Recorded by A as it stopped: B replays it and ends, with no lease to wait.
    const resumed = await resume(b.url, session, first.id!);
    assert.equal(resumed.status, 200);
    const rest = await readToEnd(new SseReader(resumed), 4 * LEASE_MS);
    assert.equal(rest.ended, true);
    const last = rest.messages.at(-1)?.message as { id?: unknown; error?: { code?: number } };
    assert.equal(last?.id, 42);
    assert.equal(last.error?.code, -32603);
    const { stderr } = await b.stop();
    assert.doesNotMatch(stderr, /stopped before answering/, "B did not have to answer it");
  });
});
