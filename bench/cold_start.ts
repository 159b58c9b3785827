/**
 * Cold start: milliseconds from spawning a server process to the first
 * answered stateless `tools/call` (listening line, then one request).
 *
 * @module
 */

import { percentileOf } from "./measurement.ts";
import { startServer } from "./process.ts";
import { post, statelessCall } from "./wire.ts";

/**
 * Starts `deno <args>` `repetitions` times and returns the median time to the
 * first answered request.
 *
 * @param args The arguments after `deno`.
 * @param repetitions How many starts.
 * @returns Median milliseconds.
 */
export async function measureColdStart(args: string[], repetitions: number): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < repetitions; i++) {
    const started = performance.now();
    const server = await startServer(args);
    try {
      const { status } = await post(server.url, statelessCall(1));
      if (status !== 200) throw new Error(`first request answered ${status}`);
      times.push(performance.now() - started);
    } finally {
      await server.stop();
    }
  }
  times.sort((a, b) => a - b);
  return percentileOf(times, 50);
}
