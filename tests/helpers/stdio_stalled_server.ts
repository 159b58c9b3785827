/**
 * `serveStdio` on the process's stdin and stdout, as `cli serve` runs it but
 * with a 500 ms grace period and a 64 KiB high-water mark: for the tests of
 * shutting down while nobody reads stdout. It says on stderr once it has
 * written more than a pipe holds, and exits 0 when serving ends.
 *
 * @module
 */

import { serveStdio } from "@anubis/transport-stdio";
import server from "../../examples/everything.ts";

const stdout = Deno.stdout.writable.getWriter();
let written = 0;
// Counts what goes to stdout, to tell the test once the pipe must be full.
const writable = new WritableStream<Uint8Array>({
  write(chunk) {
    written += chunk.length;
    if (written > 256 * 1024 && written - chunk.length <= 256 * 1024) {
      console.error("stdout is full");
    }
    return stdout.write(chunk);
  },
});
const shutdown = new AbortController();
Deno.addSignalListener("SIGTERM", () => shutdown.abort());
await serveStdio(server, {
  writable,
  signal: shutdown.signal,
  gracePeriodMs: 500,
  highWaterMark: 64 * 1024,
});
console.error("served");
Deno.exit(0);
