/**
 * One `requestState` signing key for every instance on a KV database, with
 * no configuration: created once, atomically, by whichever instance comes
 * first, read by every other, and rotated without breaking rounds in flight.
 *
 * @module
 */

import type { RequestStateCodec, RequestStateKeys } from "../request_state.ts";
import type { KvKey, KvLike } from "./kv_like.ts";
import { retryLocked } from "./kv_retry.ts";
import { logger } from "../logger.ts";

/**
 * Options of {@link SharedRequestStateKeys}.
 *
 * @example
 * ```ts
 * import type { SharedRequestStateKeysOptions } from "@anubis/core/kv";
 * const options: SharedRequestStateKeysOptions = { rotateAfterMs: 24 * 3_600_000 };
 * ```
 */
export interface SharedRequestStateKeysOptions {
  /** Where the keys live (default `["anubis", "request-state", "keys"]`). */
  key?: KvKey;
  /**
   * Age after which the current secret is replaced, in ms (default 7 days;
   * `Infinity`: never). The instance that finds it stale rotates it.
   */
  rotateAfterMs?: number;
  /**
   * How long a replaced secret still opens states, in ms (default
   * {@link PREVIOUS_SECRET_WINDOW_MS}). It must cover the state lifetime
   * (10 minutes by default) plus the time instances take to read the new
   * secret (their refresh interval, one minute in `anubis serve`).
   */
  previousWindowMs?: number;
  /** The clock, in ms (default `Date.now`). */
  now?: () => number;
}

/**
 * How long a rotated-out secret still opens states by default: 15 minutes,
 * the default state lifetime (10 minutes) plus the instances' one-minute
 * refresh with room to spare.
 *
 * @example
 * ```ts
 * import { PREVIOUS_SECRET_WINDOW_MS } from "@anubis/core/kv";
 * import assert from "node:assert/strict";
 * assert.equal(PREVIOUS_SECRET_WINDOW_MS / 60_000, 15);
 * ```
 */
export const PREVIOUS_SECRET_WINDOW_MS = 15 * 60_000;

/** The record as stored (JSON bytes, so Deno and Node read it alike). */
interface KeysRecord {
  v: 1;
  /** The signing secret, base64. */
  secret: string;
  createdAt: number;
  /** The secret it replaced, base64, and when. */
  previous?: { secret: string; retiredAt: number };
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function toBase64(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

function fromBase64(text: string): Uint8Array {
  return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
}

/**
 * The `requestState` keys of every instance sharing a KV database. {@link load}
 * returns them, creating the first secret if there is none (an atomic
 * `check(versionstamp: null)` commit, so concurrent first starts agree on one)
 * and rotating one older than `rotateAfterMs` (checked against the record's
 * versionstamp, so one instance rotates). A rotated-out secret keeps opening
 * states for `previousWindowMs`. {@link attach} hands them to a codec and
 * keeps it current.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { RequestStateCodec } from "@anubis/core";
 * import { SharedRequestStateKeys } from "@anubis/core/kv";
 * const kv = await Deno.openKv(":memory:");
 * const [a, b] = [new RequestStateCodec(), new RequestStateCodec()];
 * const stopA = await new SharedRequestStateKeys(kv).attach(a);
 * const stopB = await new SharedRequestStateKeys(kv).attach(b);
 * const payload = { method: "tools/call", target: "t", answers: {}, round: 1 };
 * assert.equal((await b.open(await a.seal(payload), "tools/call", "t")).round, 1);
 * stopA();
 * stopB();
 * kv.close();
 * ```
 */
export class SharedRequestStateKeys {
  readonly #kv: KvLike;
  readonly #key: KvKey;
  readonly #rotateAfterMs: number;
  readonly #windowMs: number;
  readonly #now: () => number;

  /**
   * Creates the keys' handle on `kv` (nothing is read until {@link load}).
   *
   * @param kv The database the instances share.
   * @param options Where, and how often to rotate.
   */
  constructor(kv: KvLike, options: SharedRequestStateKeysOptions = {}) {
    this.#kv = kv;
    this.#key = options.key ?? ["anubis", "request-state", "keys"];
    this.#rotateAfterMs = options.rotateAfterMs ?? 7 * 24 * 3_600_000;
    this.#windowMs = options.previousWindowMs ?? PREVIOUS_SECRET_WINDOW_MS;
    this.#now = options.now ?? Date.now;
  }

  /**
   * The current keys: created when missing, rotated when stale.
   *
   * @returns The signing secret and the previous one while in its window.
   * @throws {Error} When the database fails (after retrying lock errors).
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { SharedRequestStateKeys } from "@anubis/core/kv";
   * const kv = await Deno.openKv(":memory:");
   * const [first, second] = await Promise.all([
   *   new SharedRequestStateKeys(kv).load(),
   *   new SharedRequestStateKeys(kv).load(),
   * ]);
   * assert.deepEqual(first.secret, second.secret);
   * assert.equal((first.secret as Uint8Array).length, 32);
   * kv.close();
   * ```
   */
  async load(): Promise<RequestStateKeys> {
    for (;;) {
      const entry = await retryLocked(() => this.#kv.get<Uint8Array>(this.#key));
      const record = entry.value ? this.#parse(entry.value) : undefined;
      if (record && this.#now() - record.createdAt < this.#rotateAfterMs) {
        return this.#keysOf(record);
      }
      const next: KeysRecord = {
        v: 1,
        secret: toBase64(crypto.getRandomValues(new Uint8Array(32))),
        createdAt: this.#now(),
        previous: record ? { secret: record.secret, retiredAt: this.#now() } : undefined,
      };
      const committed = await retryLocked(() =>
        this.#kv.atomic()
          .check({ key: this.#key, versionstamp: entry.versionstamp })
          .set(this.#key, encoder.encode(JSON.stringify(next)))
          .commit()
      );
      if (committed.ok) return this.#keysOf(next);
      // Another instance created or rotated it first: read what it wrote.
    }
  }

  /**
   * Replaces the signing secret now, keeping the current one as the previous
   * (for `previousWindowMs`). Other instances pick it up on their next
   * refresh, or at once when a state signed with it reaches them.
   *
   * @returns The new keys.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { SharedRequestStateKeys } from "@anubis/core/kv";
   * const kv = await Deno.openKv(":memory:");
   * const keys = new SharedRequestStateKeys(kv);
   * const before = await keys.load();
   * const after = await keys.rotate();
   * assert.notDeepEqual(after.secret, before.secret);
   * assert.deepEqual(after.previousSecrets, [before.secret]);
   * kv.close();
   * ```
   */
  async rotate(): Promise<RequestStateKeys> {
    await this.load();
    return await new SharedRequestStateKeys(this.#kv, {
      key: this.#key,
      rotateAfterMs: 0,
      previousWindowMs: this.#windowMs,
      now: this.#now,
    }).load();
  }

  /**
   * Gives `codec` the shared keys, reloads them every `refreshMs` (and when a
   * state no known key opens arrives), until the returned function is called.
   * Call the returned function before closing the database.
   *
   * @param codec The server's codec (`server.requestState`).
   * @param refreshMs How often to read the keys again (default one minute).
   * @returns Stops refreshing.
   * @throws {Error} When the first load fails.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { RequestStateCodec } from "@anubis/core";
   * import { SharedRequestStateKeys } from "@anubis/core/kv";
   * const kv = await Deno.openKv(":memory:");
   * const codec = new RequestStateCodec();
   * const stop = await new SharedRequestStateKeys(kv).attach(codec);
   * assert.equal(codec.hasSecret, true);
   * stop();
   * kv.close();
   * ```
   */
  async attach(codec: RequestStateCodec, refreshMs = 60_000): Promise<() => void> {
    const reload = () => this.load();
    await codec.useKeys(await reload(), reload);
    const timer = setInterval(() => {
      reload().then((keys) => codec.useKeys(keys, reload)).catch((error) =>
        logger.error("store.failed", "refreshing the requestState keys failed", { error })
      );
    }, refreshMs);
    return () => clearInterval(timer);
  }

  #parse(bytes: Uint8Array): KeysRecord | undefined {
    try {
      const record = JSON.parse(decoder.decode(bytes)) as KeysRecord;
      return record?.v === 1 && typeof record.secret === "string" ? record : undefined;
    } catch {
      return undefined; // unreadable: replaced like a missing one
    }
  }

  #keysOf(record: KeysRecord): RequestStateKeys {
    const previous = record.previous;
    const live = previous && this.#now() - previous.retiredAt < this.#windowMs;
    return {
      secret: fromBase64(record.secret),
      previousSecrets: live ? [fromBase64(previous.secret)] : [],
    };
  }
}
