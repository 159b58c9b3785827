/**
 * Backpressure across requests on stdio, over a real `cli serve` child
 * process: while nobody reads its stdout, the server stops reading stdin, so
 * its pending output and work stay bounded; once stdout is read, every
 * request is answered.
 */

import assert from "node:assert/strict";
import { spawnServe, statelessToolsList as request } from "../helpers/stdio_child.ts";

const REQUESTS = 12_000;
const PER_WRITE = 100;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resident memory of a process in MiB, where /proc tells it. */
function rssMiB(pid: number): number | undefined {
  try {
    const status = Deno.readTextFileSync(`/proc/${pid}/status`);
    return Number(status.match(/VmRSS:\s+(\d+)/)![1]) / 1024;
  } catch {
    return undefined;
  }
}

Deno.test("stdio: with stdout unread, the server stops taking requests; then answers them all", async () => {
  const child = spawnServe("examples/everything.ts");
  const stderr = new Response(child.stderr).text();
  const writer = child.stdin.getWriter();
  const encoder = new TextEncoder();
  // Each tools/list answer is about 6 KB: 12,000 of them are about 70 MB.
  let accepted = 0;
  const flooding = (async () => {
    for (let first = 1; first <= REQUESTS; first += PER_WRITE) {
      let chunk = "";
      for (let id = first; id < first + PER_WRITE; id++) chunk += request(id);
      await writer.write(encoder.encode(chunk));
      accepted += PER_WRITE;
    }
  })();
  // Wait until the server stops taking input (or has taken it all).
  let seen = -1;
  const deadline = Date.now() + 15_000;
  while (accepted !== seen && accepted < REQUESTS && Date.now() < deadline) {
    seen = accepted;
    await sleep(500);
  }
  const blockedAt = accepted;
  const rss = rssMiB(child.pid);
  console.log(
    `server took ${blockedAt} of ${REQUESTS} requests unanswered; RSS ${rss?.toFixed(0)} MiB`,
  );
  // Bounded by the 4 MiB high-water mark (about 700 answers), what the pipes
  // hold and the reads taken before the answers were queued: about 2,400 here,
  // far from the 12,000 sent.
  assert.ok(blockedAt <= 4_000, `the server took ${blockedAt} requests while nobody read stdout`);
  if (rss !== undefined) assert.ok(rss < 200, `server RSS ${rss} MiB`);

  const answered = new Set<number>();
  let buffer = "";
  for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
    buffer += chunk;
    let newline;
    while ((newline = buffer.indexOf("\n")) !== -1) {
      const message = JSON.parse(buffer.slice(0, newline));
      buffer = buffer.slice(newline + 1);
      assert.ok(Array.isArray(message.result?.tools), JSON.stringify(message).slice(0, 200));
      answered.add(message.id);
    }
    if (answered.size === REQUESTS) break;
  }
  await flooding;
  await writer.close();
  const status = await child.status;
  assert.equal(answered.size, REQUESTS);
  assert.equal(status.code, 0, await stderr);
});
