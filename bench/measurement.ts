/**
 * What one load run measured, and the load shape every HTTP and stdio run
 * shares.
 *
 * @module
 */

/** One load run's numbers. */
export interface Measurement {
  /** Completed requests (round trips) per second. */
  rps: number;
  /** Median latency in milliseconds. */
  p50Ms: number;
  /** 99th percentile latency in milliseconds. */
  p99Ms: number;
  /** Completed requests. */
  requests: number;
  /** Responses that were not 2xx/3xx, plus socket errors. */
  errors: number;
  /** Server CPU time (user + system) per completed request, in microseconds, when measured. */
  cpuUsPerRequest?: number;
  /** Sessions opened (session-creation runs only). */
  sessions?: number;
}

/** How hard and how long to load a server. */
export interface LoadShape {
  /** Open connections (HTTP) or requests in flight (stdio). */
  connections: number;
  /** Measured seconds. */
  seconds: number;
  /** Unmeasured warm-up seconds before the measured run. */
  warmupSeconds: number;
}

/**
 * The given percentile of a list of latencies.
 *
 * @param sorted Latencies, ascending.
 * @param percentile 0 to 100.
 * @returns The value at that percentile (0 for an empty list).
 */
export function percentileOf(sorted: readonly number[], percentile: number): number {
  if (sorted.length === 0) return 0;
  const index = Math.min(sorted.length - 1, Math.ceil((percentile / 100) * sorted.length) - 1);
  return sorted[Math.max(0, index)];
}
