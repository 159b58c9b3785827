/**
 * Cold start: milliseconds from spawning a server process to the first
 * answered stateless `tools/call` (listening line, then one request).
 *
 * @module
 */

import { startServer } from "./process.ts";
import { post, statelessCall } from "./wire.ts";

/**
 * Starts `deno <args>` once and returns the time to the first answered
 * request.
 *
 * @param args The arguments after `deno`.
 * @returns Milliseconds from spawn to the answer.
 */
export async function measureColdStart(args: string[]): Promise<number> {
  const started = performance.now();
  const server = await startServer(args);
  try {
    const { status } = await post(server.url, statelessCall(1));
    if (status !== 200) throw new Error(`first request answered ${status}`);
    return performance.now() - started;
  } finally {
    await server.stop();
  }
}
