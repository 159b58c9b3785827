/**
 * Shutting down while nobody reads stdout: SIGTERM, or the end of stdin, still
 * ends serving within the grace period, with exit code 0, though the output
 * never drains.
 */

import assert from "node:assert/strict";
import { serveStdio } from "@anubis/transport-stdio";
import server from "../../examples/everything.ts";
import { statelessToolsList as request } from "../helpers/stdio_child.ts";

const ROOT = new URL("../..", import.meta.url);
const GRACE_MS = 500;

/** Starts the server, and sends it work whose answers (about 1.2 MB) fill stdout. */
async function stalledServer() {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "tests/helpers/stdio_stalled_server.ts"],
    cwd: ROOT,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stdin = child.stdin.getWriter();
  const stderrLines = child.stderr.pipeThrough(new TextDecoderStream()).values();
  let stderr = "";
  const until = async (text: string) => {
    while (!stderr.includes(text)) {
      const { value, done } = await stderrLines.next();
      if (done) throw new Error(`stderr ended without "${text}":\n${stderr}`);
      stderr += value;
    }
  };
  let requests = "";
  for (let id = 1; id <= 200; id++) requests += request(id);
  await stdin.write(new TextEncoder().encode(requests));
  await until("stdout is full");
  return { child, stdin, until, stderr: () => stderr };
}

async function exitsWithin(child: Deno.ChildProcess, ms: number): Promise<Deno.CommandStatus> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<undefined>((resolve) => timer = setTimeout(resolve, ms, undefined));
  const status = await Promise.race([child.status, late]);
  clearTimeout(timer);
  if (!status) {
    child.kill("SIGKILL");
    await child.status;
    await child.stdout.cancel();
  }
  assert.ok(status, `still running ${ms} ms later`);
  return status;
}

Deno.test("stdio: SIGTERM while nobody reads stdout exits 0 within the grace period", async () => {
  const { child, stdin, until, stderr } = await stalledServer();
  const sent = Date.now();
  child.kill("SIGTERM");
  const status = await exitsWithin(child, GRACE_MS + 4_000);
  await until("served");
  assert.equal(status.code, 0, stderr());
  console.log(`exited ${Date.now() - sent} ms after SIGTERM`);
  await stdin.close().catch(() => {});
  await child.stdout.cancel();
});

Deno.test("stdio: the end of stdin while nobody reads stdout exits 0 within the grace period", async () => {
  const { child, stdin, until, stderr } = await stalledServer();
  const sent = Date.now();
  await stdin.close();
  const status = await exitsWithin(child, GRACE_MS + 4_000);
  await until("served");
  assert.equal(status.code, 0, stderr());
  console.log(`exited ${Date.now() - sent} ms after the end of stdin`);
  await child.stdout.cancel();
});

Deno.test("stdio: input that arrives while the output is full does not hide the end of input", async () => {
  // In process, with streams: a client that never reads, sends more while the
  // output is full, then closes its end. Serving ends within the grace period.
  const encoder = new TextEncoder();
  let input!: ReadableStreamDefaultController<Uint8Array>;
  const readable = new ReadableStream<Uint8Array>({ start: (c) => void (input = c) });
  let stalled!: () => void;
  const writable = new WritableStream<Uint8Array>({
    // The first write never completes until the test lets it go.
    write: () => new Promise<void>((resolve) => (stalled = resolve)),
  }, { highWaterMark: 1 });
  const served = serveStdio(server, {
    readable,
    writable,
    gracePeriodMs: 300,
    highWaterMark: 1024,
    redirectConsole: false,
  });
  let requests = "";
  for (let id = 1; id <= 50; id++) requests += request(id);
  input.enqueue(encoder.encode(requests));
  await new Promise((resolve) => setTimeout(resolve, 200));
  input.enqueue(encoder.encode(request(999)));
  await new Promise((resolve) => setTimeout(resolve, 50));
  input.enqueue(encoder.encode(request(1000)));
  await new Promise((resolve) => setTimeout(resolve, 50));
  input.close();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const outcome = await Promise.race([
    served.then(() => "served"),
    new Promise((resolve) => (timer = setTimeout(resolve, 5_000, "still serving"))),
  ]);
  clearTimeout(timer);
  stalled?.();
  assert.equal(outcome, "served");
});
