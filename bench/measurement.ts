/**
 * What one load run measured, and the load shape every HTTP and stdio run
 * shares.
 *
 * @module
 */

import { cpuUsage } from "node:process";

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
  /** Wall seconds of the measured run. */
  seconds?: number;
  /**
   * The load generator's own CPU time (user + system) over the run, in
   * microseconds: the whole wrk process, or the sum of the client processes.
   */
  clientCpuUs?: number;
  /** Cores the load generator can use at most: wrk's threads, or its client processes. */
  clientCores?: number;
  /**
   * How busy the server's busiest thread (its event loop) was over the run:
   * CPU time over wall time, 1 = on a core all along (see `watchBusiestThread`).
   */
  serverThreadShare?: number;
  /** Responses whose body was checked (absent when bodies were not checked). */
  checked?: number;
  /** Checked responses that were not the expected answer. */
  badBodies?: number;
  /** The first bad response, shortened. */
  firstBadBody?: string;
}

/** Above this share of its cores the load generator, not the server, sets the rate. */
export const CLIENT_BOUND_SHARE = 0.9;

/**
 * How busy the load generator was: its CPU time over the wall time of the
 * run and the cores it can use (1 = every core it can use was busy all along).
 *
 * @param result A measurement.
 * @returns The share, when the client's CPU was measured.
 */
export function clientShare(result: Measurement): number | undefined {
  const { clientCpuUs, clientCores, seconds } = result;
  if (clientCpuUs === undefined || !clientCores || !seconds) return undefined;
  return clientCpuUs / (seconds * 1e6 * clientCores);
}

/** Above this share of a core the server's event loop, not the client, sets the rate. */
export const SERVER_BOUND_SHARE = 0.9;

/**
 * Whether the server could not have answered faster: its busiest thread (the
 * event loop that answers every request) was on a core more than
 * {@link SERVER_BOUND_SHARE} of the run. On a 2-core machine the client and
 * the server can both be saturated; then the rate is still the server's.
 *
 * @param result A measurement.
 * @returns True when the run's rate is the server's.
 */
export function isServerBound(result: Measurement): boolean {
  return (result.serverThreadShare ?? 0) > SERVER_BOUND_SHARE;
}

/**
 * Whether a run measured its load generator rather than the server: the
 * client used more than {@link CLIENT_BOUND_SHARE} of the cores it can use
 * while the server's event loop had time to spare (not {@link isServerBound}).
 *
 * @param result A measurement.
 * @returns True when the run's rate is the client's.
 */
export function isClientBound(result: Measurement): boolean {
  return (clientShare(result) ?? 0) > CLIENT_BOUND_SHARE && !isServerBound(result);
}

/** How hard and how long to load a server. */
export interface LoadShape {
  /** Open connections (HTTP) or requests in flight (stdio). */
  connections: number;
  /** Measured seconds. */
  seconds: number;
  /** Unmeasured warm-up seconds before the measured run. */
  warmupSeconds: number;
  /** Check every response body (HTTP runs): slower for the client, and counted. */
  checkBodies?: boolean;
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

/**
 * The median of `values` (the upper of the two middle ones for an even
 * count); sorts `values` in place.
 *
 * @param values The values.
 * @returns The median.
 */
export function median(values: number[]): number {
  return values.sort((a, b) => a - b)[values.length >> 1];
}

/**
 * In-process samples of the CPU time (user + system) and the heap bytes a
 * piece of work takes per unit: `start()`, the work, `end(units)`, as many
 * times as wanted, then `medians()`. Each sample starts after a full GC when
 * the process runs with `--expose-gc`.
 */
export class Sampler {
  readonly #gc = (globalThis as { gc?: () => void }).gc;
  readonly #times: number[] = [];
  readonly #bytes: number[] = [];
  #cpu = cpuUsage();
  #heap = 0;

  /** Starts a sample. */
  start(): void {
    this.#gc?.();
    this.#heap = Deno.memoryUsage().heapUsed;
    this.#cpu = cpuUsage();
  }

  /** Ends the sample begun by {@link start}: `units` pieces of work were done. */
  end(units: number): void {
    const used = cpuUsage(this.#cpu);
    this.#times.push((used.user + used.system) / units);
    this.#bytes.push((Deno.memoryUsage().heapUsed - this.#heap) / units);
  }

  /** The median CPU µs and KB allocated per unit over the samples. */
  medians(): { us: number; kb: number } {
    return { us: median(this.#times), kb: median(this.#bytes) / 1024 };
  }
}
