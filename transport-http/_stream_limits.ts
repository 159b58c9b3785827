/**
 * The handler's limits after defaults, and the bound on open streams.
 *
 * @module
 */

import { ErrorCode, type RequestId } from "@anubis/core";
import { errorResponseOf } from "./_json_responses.ts";
import { ClientHoldings } from "./_fair_share.ts";

/** A taken slot: how to give it back, and how to end what holds it (if it can be ended). */
interface Slot {
  readonly release: () => void;
  readonly close: (() => void) | undefined;
}

/** How many of the largest holders a full counter looks at for a stream to take back. */
const VICTIMS_LOOKED_AT = 16;

/**
 * The limits and timings the endpoints share.
 *
 * @example
 * ```ts
 * import type { HttpLimits } from "./_stream_limits.ts";
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
 * Counts open long-lived streams against a bound, and each client's against
 * a bound of its own, so one client cannot take every slot. When every slot
 * is taken, a client's request takes back the oldest closable stream of the
 * client holding the most, if that one holds at least two more than the
 * asking client: a few clients holding their bounds cannot lock others out.
 *
 * @example
 * ```ts
 * import { StreamCounter } from "./_stream_limits.ts";
 * import assert from "node:assert/strict";
 * const counter = new StreamCounter(1);
 * const release = counter.acquire();
 * assert.equal(release !== undefined, true);
 * assert.equal(counter.acquire(), undefined);
 * release?.();
 * ```
 */
export class StreamCounter {
  #open = 0;
  readonly #max: number;
  readonly #maxPerClient: number;
  readonly #perClient = new ClientHoldings<Slot>();

  /**
   * Creates the counter.
   *
   * @param max The bound.
   * @param maxPerClient The bound for one client (default: none but `max`).
   */
  constructor(max: number, maxPerClient = Infinity) {
    this.#max = max;
    this.#maxPerClient = maxPerClient;
  }

  /**
   * The number of open streams.
   *
   * @example
   * ```ts
   * import { StreamCounter } from "./_stream_limits.ts";
   * import assert from "node:assert/strict";
   * const counter = new StreamCounter(10);
   * const release = counter.acquire();
   * assert.equal(counter.open, 1);
   * release?.();
   * assert.equal(counter.open, 0);
   * ```
   */
  get open(): number {
    return this.#open;
  }

  /**
   * Whether every slot is taken (a refused `acquire` was the bound's, not
   * the client's).
   *
   * @example
   * ```ts
   * import { StreamCounter } from "./_stream_limits.ts";
   * const counter = new StreamCounter(2, 1);
   * counter.acquire("10.0.0.1");
   * if (counter.acquire("10.0.0.1") !== undefined || counter.full) {
   *   throw new Error("the client's own bound refused it");
   * }
   * ```
   */
  get full(): boolean {
    return this.#open >= this.#max;
  }

  /**
   * Takes a slot.
   *
   * @param client Who asks (an address or a principal); without one only the bound counts.
   * @param close Ends the stream this slot is for (its release follows): a
   *   full counter may call it to give the slot to a client holding fewer.
   *   Without it the slot is never taken back.
   * @returns The release function, or `undefined` when every slot, or every
   * slot the client may hold, is taken.
   *
   * @example
   * ```ts
   * import { StreamCounter } from "./_stream_limits.ts";
   * const counter = new StreamCounter(3, 1);
   * const release = counter.acquire("10.0.0.1");
   * if (counter.acquire("10.0.0.1") !== undefined) throw new Error("one per client");
   * if (counter.acquire("10.0.0.2") === undefined) throw new Error("another client has room");
   * release?.();
   * release?.(); // releasing twice frees one slot only
   * if (counter.open !== 1 || counter.acquire("10.0.0.1") === undefined) throw new Error("freed");
   * ```
   */
  acquire(client?: string, close?: () => void): (() => void) | undefined {
    const held = client === undefined ? 0 : this.#perClient.count(client);
    if (held >= this.#maxPerClient) return undefined;
    if (this.#open >= this.#max && !this.#takeBack(held)) return undefined;
    this.#open++;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.#open--;
      if (client !== undefined) this.#perClient.delete(client, slot);
    };
    const slot: Slot = { release, close };
    if (client !== undefined) this.#perClient.add(client, slot);
    return release;
  }

  /** Ends the oldest closable stream of a client holding at least two more than `held`. */
  #takeBack(held: number): boolean {
    let looked = 0;
    for (const [, slots] of this.#perClient.largest(held)) {
      for (const slot of slots) {
        if (slot.close === undefined) continue;
        slot.release();
        slot.close();
        return true;
      }
      if (++looked === VICTIMS_LOOKED_AT) break;
    }
    return false;
  }
}

/**
 * The answer to a stream the counter refused: 503 when every slot is taken,
 * 429 when the client holds as many as it may.
 *
 * @param streams The counter that refused.
 * @param id The request id, if any.
 * @returns The error response.
 *
 * @example
 * ```ts
 * import { StreamCounter, streamRefusal } from "./_stream_limits.ts";
 * const counter = new StreamCounter(2, 1);
 * counter.acquire("10.0.0.1");
 * const refusal = streamRefusal(counter, null);
 * if (refusal.status !== 429) throw new Error(String(refusal.status));
 * await refusal.body?.cancel();
 * ```
 */
export function streamRefusal(streams: StreamCounter, id: RequestId | null): Response {
  return streams.full
    ? errorResponseOf(503, id, ErrorCode.INTERNAL_ERROR, "Too many open streams")
    : errorResponseOf(429, id, ErrorCode.INTERNAL_ERROR, "Too many open streams for this client");
}
