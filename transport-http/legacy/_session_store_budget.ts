/**
 * What the session table may hold in its session store: a byte budget per
 * client and in total for the records this instance wrote, and the error a
 * save that cannot be done becomes (too large, over budget, store down).
 *
 * @module
 */

import { ErrorCode } from "@anubis/core";
import type { SessionEntry } from "./_session_entry.ts";

/** Default {@link StoreBudget.perClient}: 16 MiB of records per client. */
export const DEFAULT_STORED_BYTES_PER_CLIENT = 16 * 1024 * 1024;
/** Default {@link StoreBudget.total}: 256 MiB of records in all. */
export const DEFAULT_STORED_BYTES = 256 * 1024 * 1024;

/**
 * Why a session's record was not stored, as the request that caused the save
 * is answered: the HTTP status, the JSON-RPC code, and whether the session
 * ends (its state cannot be kept, so no instance may restore an older one).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { SessionNotStored } from "./_session_store_budget.ts";
 * const refused = new SessionNotStored("over budget", 429, -32603, true, 30);
 * assert.equal(refused.status, 429);
 * assert.equal(refused.ends, true);
 * ```
 */
export class SessionNotStored extends Error {
  /**
   * @param message The error message the client reads.
   * @param status The HTTP status of the answer.
   * @param code The JSON-RPC error code.
   * @param ends Whether the session ends (its stored record is deleted).
   * @param retryAfterSeconds A `Retry-After` for the refusal, if one helps.
   */
  constructor(
    message: string,
    readonly status: number,
    readonly code: number,
    readonly ends: boolean,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = "SessionNotStored";
  }
}

/**
 * What a store's failure to save becomes: a record the store says is too
 * large (`RangeError`) or not JSON-safe (`TypeError`, a server defect) ends
 * the session with a 500; anything else is the store being unavailable (503,
 * the session kept: the client may retry).
 *
 * @param error What `SessionStore.save` rejected with.
 * @param id The session id.
 * @returns The refusal.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { notStored } from "./_session_store_budget.ts";
 * assert.equal(notStored(new RangeError("too large"), "s1").status, 500);
 * assert.equal(notStored(new Error("disk I/O error"), "s1").status, 503);
 * ```
 */
export function notStored(error: unknown, id: string): SessionNotStored {
  if (error instanceof SessionNotStored) return error;
  const reason = error instanceof Error ? error.message : String(error);
  if (error instanceof RangeError || error instanceof TypeError) {
    return new SessionNotStored(
      `Internal error: the session's state could not be stored (${reason}); the session has ended`,
      500,
      ErrorCode.INTERNAL_ERROR,
      true,
    );
  }
  return new SessionNotStored(
    `Session store unavailable: session ${id} could not be saved (${reason})`,
    503,
    ErrorCode.INTERNAL_ERROR,
    false,
    1,
  );
}

/**
 * The UTF-8 length of a string, without encoding it.
 *
 * @param text The string.
 * @returns Its length in UTF-8 bytes.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { utf8Length } from "./_session_store_budget.ts";
 * assert.equal(utf8Length("é€😀"), 2 + 3 + 4);
 * ```
 */
export function utf8Length(text: string): number {
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) continue;
    if (unit < 0x800) bytes += 1;
    else if (unit >= 0xd800 && unit < 0xdc00 && i + 1 < text.length) {
      bytes += 2; // a surrogate pair: 4 bytes for 2 units
      i++;
    } else bytes += 2;
  }
  return bytes;
}

/** The byte budget of {@link StoredBytes}. */
export interface StoreBudget {
  /** The most bytes of records one client's sessions may have stored. */
  perClient: number;
  /** The most bytes of records all sessions may have stored. */
  total: number;
}

/**
 * The bytes of records stored for the live sessions of one table, per client
 * and in total.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { StoredBytes } from "./_session_store_budget.ts";
 * const stored = new StoredBytes({ perClient: 100, total: 150 });
 * const entry = { client: "a", touchedAt: 0 } as never;
 * assert.equal(stored.over(entry, 80), undefined);
 * stored.charge(entry, 80);
 * assert.equal(stored.over(entry, 101), "client");
 * stored.release(entry);
 * assert.equal(stored.total, 0);
 * ```
 */
export class StoredBytes {
  readonly #budget: StoreBudget;
  readonly #byClient = new Map<string, number>();
  #total = 0;

  /** @param budget The bounds. */
  constructor(budget: StoreBudget) {
    this.#budget = budget;
  }

  /**
   * The bytes stored in all.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { StoredBytes } from "./_session_store_budget.ts";
   * assert.equal(new StoredBytes({ perClient: 1, total: 1 }).total, 0);
   * ```
   */
  get total(): number {
    return this.#total;
  }

  /**
   * Which bound storing `bytes` for the entry (in place of what it has
   * stored) would pass, if any.
   *
   * @param entry The session.
   * @param bytes The size of its new record.
   * @returns `"client"`, `"total"`, or `undefined` when it fits.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { StoredBytes } from "./_session_store_budget.ts";
   * const stored = new StoredBytes({ perClient: 10, total: 100 });
   * assert.equal(stored.over({ client: "a", touchedAt: 0 } as never, 11), "client");
   * ```
   */
  over(entry: SessionEntry, bytes: number): "client" | "total" | undefined {
    const delta = bytes - (entry.storedBytes ?? 0);
    if (delta <= 0) return undefined;
    const client = entry.client;
    const held = client === undefined ? 0 : this.#byClient.get(client) ?? 0;
    if (client !== undefined && held + delta > this.#budget.perClient) return "client";
    return this.#total + delta > this.#budget.total ? "total" : undefined;
  }

  /**
   * Records that the entry's record now takes `bytes` in the store.
   *
   * @param entry The session.
   * @param bytes The size of its record.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { StoredBytes } from "./_session_store_budget.ts";
   * const stored = new StoredBytes({ perClient: 10, total: 100 });
   * stored.charge({ touchedAt: 0 } as never, 7);
   * assert.equal(stored.total, 7);
   * ```
   */
  charge(entry: SessionEntry, bytes: number): void {
    const delta = bytes - (entry.storedBytes ?? 0);
    entry.storedBytes = bytes;
    this.#total += delta;
    if (entry.client !== undefined) {
      const held = (this.#byClient.get(entry.client) ?? 0) + delta;
      if (held > 0) this.#byClient.set(entry.client, held);
      else this.#byClient.delete(entry.client);
    }
  }

  /**
   * Records that the entry's record no longer counts (deleted, or the
   * session left this instance).
   *
   * @param entry The session.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { StoredBytes } from "./_session_store_budget.ts";
   * const stored = new StoredBytes({ perClient: 10, total: 100 });
   * const entry = { touchedAt: 0 } as never;
   * stored.charge(entry, 7);
   * stored.release(entry);
   * assert.equal(stored.total, 0);
   * ```
   */
  release(entry: SessionEntry): void {
    if (entry.storedBytes) this.charge(entry, 0);
  }
}
