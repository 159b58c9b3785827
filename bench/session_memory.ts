/**
 * Resident memory per idle legacy session: opens many sessions on a running
 * server (`initialize` + `notifications/initialized`, a few in flight at a
 * time) and divides the growth of the server's RSS by their number.
 *
 * @module
 */

import { residentBytes, type RunningServer } from "./process.ts";
import { legacyCall, openSession, post } from "./wire.ts";

/** What a session-memory run found. */
export interface SessionMemory {
  /** Growth of the resident set size after a full GC, divided by sessions opened, in bytes. */
  rssPerSession: number;
  /** Growth of the V8 heap in use after a full GC, divided by sessions opened, in bytes. */
  heapPerSession: number;
  /** Sessions opened in the measured phase. */
  opened: number;
  /** Whether the first measured session still answers at the end. */
  firstStillOpen: boolean;
}

const WARM_UP_SESSIONS = 1000;

const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function openMany(url: string, count: number, inFlight: number): Promise<string[]> {
  const ids: string[] = new Array(count);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const index = next++;
      const { sessionId } = await openSession(url);
      ids[index] = sessionId ?? "";
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  return ids;
}

/** Asks the server to collect garbage (its `/__bench/gc` hook) and reads its memory. */
async function collect(server: RunningServer): Promise<{ rss: number; heapUsed: number }> {
  const response = await fetch(new URL("/__bench/gc", server.url), {
    method: "POST",
    signal: AbortSignal.timeout(30_000),
  });
  if (!response.ok) throw new Error(`GC hook answered ${response.status}`);
  const usage = await response.json();
  await settle(200);
  return { rss: residentBytes(server.pid), heapUsed: usage.heapUsed };
}

/**
 * Measures memory per idle session. The server must run with its GC hook on
 * (`withGcHook` in `servers.ts`).
 *
 * @param server The server (serving legacy sessions).
 * @param sessions How many sessions to open.
 * @param inFlight Sessions being opened at once.
 * @returns The result.
 */
export async function measureSessionMemory(
  server: RunningServer,
  sessions: number,
  inFlight = 16,
): Promise<SessionMemory> {
  // Warm up code paths, allocator pools and the heap's first growth before the
  // baseline reading: with 200 warm-up sessions, the first thousands measured
  // also paid for one-time growth (malloc arenas, V8 pages), about 1.4 KB per
  // session spread over 5,000.
  await openMany(server.url, WARM_UP_SESSIONS, inFlight);
  const before = await collect(server);
  const ids = await openMany(server.url, sessions, inFlight);
  const after = await collect(server);
  const { status, message } = await post(server.url, legacyCall(ids[0], undefined, 1));
  return {
    rssPerSession: (after.rss - before.rss) / sessions,
    heapPerSession: (after.heapUsed - before.heapUsed) / sessions,
    opened: sessions,
    firstStillOpen: status === 200 && message.result !== undefined,
  };
}
