/**
 * The handler's limits after defaults, and the bound on open streams.
 *
 * @module
 */

/**
 * The limits and timings the endpoints share.
 *
 * @example
 * ```ts
 * import type { HttpLimits } from "@anubis/transport-http";
 * const limits: HttpLimits = { maxStreams: 1000, keepAliveMs: 15_000, resumable: true };
 * ```
 */
export interface HttpLimits {
  /** The most open standalone and listen streams. */
  maxStreams: number;
  /** Keep-alive comment interval on open streams (0: none). */
  keepAliveMs: number;
  /** Whether an event store is configured. */
  resumable: boolean;
  /** The most entries in a JSON-RPC batch (default 1,000); beyond it one -32600. */
  maxBatchEntries?: number;
  /** The most bytes of JSON in a batch's answer (default 8 MiB); see `boundBatchAnswer`. */
  maxBatchAnswerBytes?: number;
}

/**
 * Counts open long-lived streams against a bound.
 *
 * @example
 * ```ts
 * import { StreamCounter } from "@anubis/transport-http";
 * const counter = new StreamCounter(1);
 * const release = counter.acquire();
 * console.log(release !== undefined, counter.acquire()); // true undefined
 * release?.();
 * ```
 */
export class StreamCounter {
  #open = 0;
  readonly #max: number;

  /**
   * Creates the counter.
   *
   * @param max The bound.
   */
  constructor(max: number) {
    this.#max = max;
  }

  /**
   * The number of open streams.
   *
   * @example
   * ```ts
   * import { StreamCounter } from "@anubis/transport-http";
   * const counter = new StreamCounter(10);
   * const release = counter.acquire();
   * console.log(counter.open); // 1
   * release?.();
   * console.log(counter.open); // 0
   * ```
   */
  get open(): number {
    return this.#open;
  }

  /**
   * Takes a slot.
   *
   * @returns The release function, or `undefined` when every slot is taken.
   *
   * @example
   * ```ts
   * import { StreamCounter } from "@anubis/transport-http";
   * const counter = new StreamCounter(1);
   * const release = counter.acquire();
   * console.log(counter.acquire()); // undefined
   * release?.();
   * release?.(); // releasing twice frees one slot only
   * console.log(counter.open, counter.acquire() !== undefined); // 0 true
   * ```
   */
  acquire(): (() => void) | undefined {
    if (this.#open >= this.#max) return undefined;
    this.#open++;
    let released = false;
    return () => {
      if (!released) (released = true, this.#open--);
    };
  }
}
