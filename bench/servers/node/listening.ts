/**
 * How every Node benchmark server serves: `node:http` on 127.0.0.1 with a
 * free port (`BENCH_PORT` when set), one `NAME: listening on http://…/mcp`
 * line on stderr once it accepts connections (what the orchestrator waits
 * for, as with `servers/listening.ts` on Deno), a quiet exit on
 * SIGTERM/SIGINT, and an exit on its own after `BENCH_MAX_SECONDS` (600).
 *
 * These modules run under Node as plain JavaScript: `bench/node.ts` bundles
 * them with `deno bundle --packages=external` and installs their npm
 * packages with npm next to the bundle.
 *
 * @module
 */

import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import process from "node:process";

/** A `node:http` request listener. */
export type Listener = (request: IncomingMessage, response: ServerResponse) => void;

/**
 * Serves `listener` on 127.0.0.1 and announces the address on stderr.
 *
 * @param name Who is listening (printed before the address).
 * @param listener The request listener.
 */
export function listenBench(name: string, listener: Listener): void {
  for (const signal of ["SIGTERM", "SIGINT"] as const) process.on(signal, () => process.exit(0));
  // Never outlive a lost orchestrator by long: stop after BENCH_MAX_SECONDS (10 minutes).
  const lifetime = Number(process.env.BENCH_MAX_SECONDS ?? 600) * 1000;
  setTimeout(() => process.exit(3), lifetime).unref();
  const server = createServer(listener);
  server.listen(Number(process.env.BENCH_PORT ?? 0), "127.0.0.1", () => {
    const address = server.address();
    const port = typeof address === "object" && address ? address.port : 0;
    console.error(`${name}: listening on http://127.0.0.1:${port}/mcp`);
  });
}
