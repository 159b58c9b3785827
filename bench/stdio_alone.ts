/**
 * stdio without the pipes: `serveStdio` in process on in-memory streams, fed
 * chunks of 32 lines (as `stdio_load.ts` keeps 32 requests in flight), the
 * next chunk once every answer of the last one was written. Prints, per
 * message, the process's CPU time (user + system) and the bytes allocated,
 * for the raw line echo's work on the same chunks (`servers/raw_stdio.ts`:
 * decode, split, parse, answer, encode), stateless 2026-07-28 calls, and
 * calls in one 2025-11-25 session; the rows are taken in turn, and a median
 * of five samples each. Bytes do not move with the machine's load; the CPU
 * ratio to the raw row moves less than the pipes' round trips do:
 * `deno run -A --v8-flags=--min-semi-space-size=256,--max-semi-space-size=256,--expose-gc
 * bench/stdio_alone.ts [CHUNKS] [raw|stateless|session]` (one row only: to
 * profile it with `--cpu-prof`).
 *
 * @module
 */

import { serveStdio } from "@anubis/transport-stdio";
import { Sampler } from "./measurement.ts";
import server from "./servers/echo_server.ts";
import { rawEcho } from "./servers/raw_stdio.ts";
import { LEGACY_VERSION, legacyCall, legacyInitialize, statelessCall } from "./wire.ts";

const gc = (globalThis as { gc?: () => void }).gc;
const encoder = new TextEncoder();
const IN_FLIGHT = 32;

type Row = "raw" | "stateless" | "session";
type Serve = (
  readable: ReadableStream<Uint8Array>,
  writable: WritableStream<Uint8Array>,
) => Promise<void>;

/** What `servers/raw_stdio.ts` does, on the given streams. */
const rawServe: Serve = async (readable, writable) => {
  await rawEcho(readable, writable);
  await writable.close();
};

const anubis: Serve = (readable, writable) =>
  serveStdio(server, { readable, writable, redirectConsole: false });

/** The chunk of 32 calls the row sends again and again (the ids do not matter here). */
function chunkOf(row: Row): Uint8Array {
  const legacy = legacyCall(undefined, LEGACY_VERSION, 0).body;
  let text = "";
  for (let id = 1; id <= IN_FLIGHT; id++) {
    text += (row === "session" ? legacy.replace('"id":0', `"id":${id}`) : statelessCall(id).body) +
      "\n";
  }
  return encoder.encode(text);
}

/** CPU µs and bytes per message: the median of five samples of `chunks` chunks. */
async function measure(row: Row, chunks: number): Promise<{ us: number; kb: number }> {
  const chunk = chunkOf(row);
  const samples = 5, warmup = 300;
  let answered = 0, expected = 0, sent = 0;
  let wake: (() => void) | undefined;
  const sampler = new Sampler();
  const readable = new ReadableStream<Uint8Array>({
    start(controller) {
      if (row !== "session") return;
      const initialized = JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" });
      controller.enqueue(encoder.encode(`${legacyInitialize().body}\n${initialized}\n`));
      expected = 1;
    },
    async pull(controller) {
      while (answered < expected) await new Promise<void>((resolve) => wake = resolve);
      const done = sent - warmup;
      if (done >= 0 && done % chunks === 0) {
        if (done > 0) sampler.end(chunks * IN_FLIGHT);
        if (done === samples * chunks) return controller.close();
        sampler.start();
      }
      controller.enqueue(chunk);
      expected += IN_FLIGHT;
      sent++;
    },
  });
  const writable = new WritableStream<Uint8Array>({
    write(written) {
      for (let i = written.indexOf(10); i !== -1; i = written.indexOf(10, i + 1)) answered++;
      if (answered >= expected) wake?.();
    },
  });
  await (row === "raw" ? rawServe : anubis)(readable, writable);
  return sampler.medians();
}

if (import.meta.main) {
  if (gc === undefined) {
    console.error("stdio_alone: run with --v8-flags=--expose-gc,--min-semi-space-size=256,...");
  }
  const chunks = Number(Deno.args[0] ?? 500);
  const only = Deno.args[1] as Row | undefined;
  const rows: Row[] = only ? [only] : ["raw", "stateless", "session"];
  for (let round = 0; round < 2; round++) {
    const raw = only ? undefined : await measure("raw", chunks);
    for (const row of rows) {
      const { us, kb } = row === "raw" && raw ? raw : await measure(row, chunks);
      const ratio = raw ? ` (raw ${(raw.us / us).toFixed(2)}x)` : "";
      console.log(
        `${row.padEnd(10)} ${us.toFixed(2)} µs/message${ratio}  ${kb.toFixed(2)} KB/message`,
      );
    }
  }
}
