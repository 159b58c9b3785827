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
 * Where the instances' keys record lives: one text, read with a version and
 * replaced by compare-and-set against it (a KV versionstamp, the value a
 * Redis script compares).
 *
 * @example
 * ```ts
 * import type { KeysCell } from "@anubis/core/kv";
 * import assert from "node:assert/strict";
 * let stored: string | undefined;
 * const cell: KeysCell<string | undefined> = {
 *   read: () => Promise.resolve({ text: stored, version: stored }),
 *   replace(version, text) {
 *     if (version !== stored) return Promise.resolve(false);
 *     stored = text;
 *     return Promise.resolve(true);
 *   },
 * };
 * assert.equal(await cell.replace(undefined, "x"), true);
 * assert.equal(await cell.replace(undefined, "y"), false);
 * ```
 */
export interface KeysCell<V> {
  /** The record's text (`undefined` when there is none) and its version. */
  read(): Promise<{ text: string | undefined; version: V }>;
  /**
   * Writes `text` if the record is still at `version`.
   *
   * @returns `false` when another instance wrote first.
   */
  replace(version: V, text: string): Promise<boolean>;
}

/**
 * Options of {@link RotatingKeys}.
 *
 * @example
 * ```ts
 * import type { RotatingKeysOptions } from "@anubis/core/kv";
 * import assert from "node:assert/strict";
 * const options: RotatingKeysOptions = { rotateAfterMs: 3_600_000, maxRaces: 100 };
 * assert.equal(options.maxRaces, 100);
 * ```
 */
export interface RotatingKeysOptions {
  /** Age after which the current secret is replaced, in ms (default 7 days; `Infinity`: never). */
  rotateAfterMs?: number;
  /** How long a replaced secret still opens states, in ms (default {@link PREVIOUS_SECRET_WINDOW_MS}). */
  previousWindowMs?: number;
  /** The clock, in ms (default `Date.now`). */
  now?: () => number;
  /** Writes lost to other instances that `load` tolerates: one more gives up (default: no bound). */
  maxRaces?: number;
  /** Where the keys live, for the log (`"Redis"`: "… from Redis failed"). */
  source?: string;
}

/**
 * The `requestState` keys of every instance sharing one {@link KeysCell}:
 * {@link RotatingKeys.load} creates the first secret if there is none and
 * rotates one older than `rotateAfterMs`, each by compare-and-set on the
 * version read, so concurrent first starts agree on one secret and one
 * instance rotates; a rotated-out secret keeps opening states for
 * `previousWindowMs`. {@link RotatingKeys.attach} hands them to a codec and
 * keeps it current. `SharedRequestStateKeys` (KV) and `RedisRequestStateKeys`
 * are this on their stores.
 *
 * @example
 * ```ts
 * import { RotatingKeys } from "@anubis/core/kv";
 * import assert from "node:assert/strict";
 * let stored: string | undefined;
 * const keys = new RotatingKeys({
 *   read: () => Promise.resolve({ text: stored, version: stored }),
 *   replace(version, text) {
 *     if (version !== stored) return Promise.resolve(false);
 *     stored = text;
 *     return Promise.resolve(true);
 *   },
 * });
 * const [first, second] = await Promise.all([keys.load(), keys.load()]);
 * assert.deepEqual(first.secret, second.secret);
 * assert.equal((first.secret as Uint8Array).length, 32);
 * ```
 */
export class RotatingKeys<V> {
  readonly #cell: KeysCell<V>;
  readonly #rotateAfterMs: number;
  readonly #windowMs: number;
  readonly #now: () => number;
  readonly #maxRaces: number;
  readonly #source: string;

  /**
   * Creates the keys' handle on `cell` (nothing is read until {@link RotatingKeys.load}).
   *
   * @param cell Where the record lives.
   * @param options How often to rotate, and how long a replaced secret lives.
   */
  constructor(cell: KeysCell<V>, options: RotatingKeysOptions = {}) {
    this.#cell = cell;
    this.#rotateAfterMs = options.rotateAfterMs ?? 7 * 24 * 3_600_000;
    this.#windowMs = options.previousWindowMs ?? PREVIOUS_SECRET_WINDOW_MS;
    this.#now = options.now ?? Date.now;
    this.#maxRaces = options.maxRaces ?? Infinity;
    this.#source = options.source ? ` from ${options.source}` : "";
  }

  /**
   * The current keys: created when missing, rotated when stale.
   *
   * @returns The signing secret and the previous one while in its window.
   * @throws {Error} When the store fails, or `maxRaces` writes were lost.
   *
   * @example
   * ```ts
   * import { RotatingKeys } from "@anubis/core/kv";
   * import assert from "node:assert/strict";
   * let stored: string | undefined;
   * let clock = 0;
   * const keys = new RotatingKeys({
   *   read: () => Promise.resolve({ text: stored, version: stored }),
   *   replace(version, text) {
   *     if (version !== stored) return Promise.resolve(false);
   *     stored = text;
   *     return Promise.resolve(true);
   *   },
   * }, { rotateAfterMs: 1_000, now: () => clock });
   * const before = await keys.load();
   * clock = 2_000; // stale: the next load rotates, and the old secret still opens
   * const after = await keys.load();
   * assert.notDeepEqual(after.secret, before.secret);
   * assert.deepEqual(after.previousSecrets, [before.secret]);
   * ```
   */
  load(): Promise<RequestStateKeys> {
    return this.#load(this.#rotateAfterMs);
  }

  /**
   * Replaces the signing secret now, keeping the current one as the previous
   * (for `previousWindowMs`).
   *
   * @returns The new keys.
   *
   * @example
   * ```ts
   * import { RotatingKeys } from "@anubis/core/kv";
   * import assert from "node:assert/strict";
   * let stored: string | undefined;
   * const keys = new RotatingKeys({
   *   read: () => Promise.resolve({ text: stored, version: stored }),
   *   replace(version, text) {
   *     if (version !== stored) return Promise.resolve(false);
   *     stored = text;
   *     return Promise.resolve(true);
   *   },
   * });
   * const before = await keys.load();
   * const after = await keys.rotate();
   * assert.deepEqual(after.previousSecrets, [before.secret]);
   * ```
   */
  async rotate(): Promise<RequestStateKeys> {
    await this.load();
    return await this.#load(0);
  }

  async #load(rotateAfterMs: number): Promise<RequestStateKeys> {
    for (let races = 0;; races++) {
      const { text, version } = await this.#cell.read();
      const record = text ? parseRecord(text) : undefined;
      if (record && this.#now() - record.createdAt < rotateAfterMs) {
        return this.#keysOf(record);
      }
      const next: KeysRecord = {
        v: 1,
        secret: toBase64(crypto.getRandomValues(new Uint8Array(32))),
        createdAt: this.#now(),
        previous: record ? { secret: record.secret, retiredAt: this.#now() } : undefined,
      };
      if (await this.#cell.replace(version, JSON.stringify(next))) return this.#keysOf(next);
      // Another instance created or rotated it first: read what it wrote.
      if (races >= this.#maxRaces) {
        throw new Error("Could not write the requestState keys: kept losing races");
      }
    }
  }

  /**
   * Hands the keys to `codec` and re-reads them every `refreshMs` (and
   * whenever a state fails to open with them), so a rotation made by
   * another instance reaches this one.
   *
   * @param codec The server's codec (`server.requestState`).
   * @param refreshMs How often to re-read the keys, in ms (default 60,000).
   * @returns A function that stops refreshing.
   *
   * @example
   * ```ts
   * import { RequestStateCodec } from "@anubis/core";
   * import { RotatingKeys } from "@anubis/core/kv";
   * import assert from "node:assert/strict";
   * let stored: string | undefined;
   * const keys = new RotatingKeys({
   *   read: () => Promise.resolve({ text: stored, version: stored }),
   *   replace(version, text) {
   *     if (version !== stored) return Promise.resolve(false);
   *     stored = text;
   *     return Promise.resolve(true);
   *   },
   * });
   * const [a, b] = [new RequestStateCodec(), new RequestStateCodec()];
   * const stop = [await keys.attach(a), await keys.attach(b)];
   * const payload = { method: "tools/call", target: "t", answers: {}, round: 1 };
   * assert.equal((await b.open(await a.seal(payload), "tools/call", "t")).round, 1);
   * for (const s of stop) s();
   * ```
   */
  async attach(codec: RequestStateCodec, refreshMs = 60_000): Promise<() => void> {
    const reload = () => this.load();
    await codec.useKeys(await reload(), reload);
    const timer = setInterval(() => {
      reload().then((keys) => codec.useKeys(keys, reload)).catch((error) =>
        logger.error("store.failed", `refreshing the requestState keys${this.#source} failed`, {
          error,
        })
      );
    }, refreshMs);
    return () => clearInterval(timer);
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

function parseRecord(text: string): KeysRecord | undefined {
  try {
    const record = JSON.parse(text) as KeysRecord;
    return record?.v === 1 && typeof record.secret === "string" ? record : undefined;
  } catch {
    return undefined; // unreadable: replaced like a missing one
  }
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
  readonly #keys: RotatingKeys<string | null>;

  /**
   * Creates the keys' handle on `kv` (nothing is read until {@link load}).
   *
   * @param kv The database the instances share.
   * @param options Where, and how often to rotate.
   */
  constructor(kv: KvLike, options: SharedRequestStateKeysOptions = {}) {
    const key = options.key ?? ["anubis", "request-state", "keys"];
    this.#keys = new RotatingKeys<string | null>({
      async read() {
        const entry = await retryLocked(() => kv.get<Uint8Array>(key));
        const text = entry.value ? decoder.decode(entry.value) : undefined;
        return { text, version: entry.versionstamp };
      },
      async replace(versionstamp, text) {
        const committed = await retryLocked(() =>
          kv.atomic().check({ key, versionstamp }).set(key, encoder.encode(text)).commit()
        );
        return committed.ok;
      },
    }, options);
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
  load(): Promise<RequestStateKeys> {
    return this.#keys.load();
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
  rotate(): Promise<RequestStateKeys> {
    return this.#keys.rotate();
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
  attach(codec: RequestStateCodec, refreshMs = 60_000): Promise<() => void> {
    return this.#keys.attach(codec, refreshMs);
  }
}
