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
  /** RSS growth divided by sessions opened, in bytes. */
  bytesPerSession: number;
  /** Sessions opened in the measured phase. */
  opened: number;
  /** Whether the first measured session still answers at the end. */
  firstStillOpen: boolean;
}

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

/**
 * Measures RSS per idle session.
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
  // Warm up code paths and allocator pools before the baseline reading.
  await openMany(server.url, 200, inFlight);
  await settle(500);
  const before = residentBytes(server.pid);
  const ids = await openMany(server.url, sessions, inFlight);
  await settle(1000);
  const after = residentBytes(server.pid);
  const { status, message } = await post(server.url, legacyCall(ids[0], undefined, 1));
  return {
    bytesPerSession: (after - before) / sessions,
    opened: sessions,
    firstStillOpen: status === 200 && message.result !== undefined,
  };
}
