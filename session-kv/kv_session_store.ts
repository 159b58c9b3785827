/**
 * A Deno KV `SessionStore`: legacy sessions any instance can restore.
 *
 * @module
 */

import type { SessionRecord, SessionStore } from "@anubis/core";
import { assertJsonSafe } from "@anubis/core/engine";
import {
  backoff,
  CHUNK_BYTES,
  chunkWrites,
  type KvKey,
  type KvKeyPart,
  type KvLike,
  MAX_PARTS_PER_COMMIT,
  readChunked,
  readHead,
  retryLocked,
} from "@anubis/core/kv";

/**
 * Options of a {@link KvSessionStore}.
 *
 * @example
 * ```ts
 * import type { KvSessionStoreOptions } from "@anubis/session-kv";
 * const options: KvSessionStoreOptions = { prefix: ["my-app", "sessions"] };
 * ```
 */
export interface KvSessionStoreOptions {
  /** Key prefix of the records (default `["anubis", "sessions"]`). */
  prefix?: readonly KvKeyPart[];
  /** How long to retry "database is locked" and lost races before failing, in ms (default 10,000). */
  retryTimeoutMs?: number;
  /** Close the database in `close()` (default `false`: the caller owns it). */
  closeKv?: boolean;
  /** The clock, in ms (default `Date.now`). */
  now?: () => number;
  /**
   * What tells whether the database's file is usable (a `KvFileWatch` from
   * `@anubis/core/kv`): while it is not (removed, replaced, read-only), every
   * method rejects with its `KvUnavailableError` instead of working on a
   * file other instances no longer share.
   */
  file?: { assertUsable(): void };
}

/** The header stored beside a record. */
interface RecordHeader {
  /** When the record stops loading (ms since the epoch). */
  expiresAt: number;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function ttl(ttlMs: number): number {
  if (!(ttlMs > 0) || !Number.isFinite(ttlMs)) {
    throw new RangeError(`ttlMs must be a positive number, got ${ttlMs}`);
  }
  return Math.ceil(ttlMs);
}

/**
 * The `SessionStore` of `@anubis/core` on Deno KV (a `Deno.Kv`, or a `Kv`
 * from `npm:@deno/kv` on Node).
 *
 * - A record is JSON in a `Uint8Array` at `[...prefix, sessionId]` (parts of
 *   a record over 60 KiB at `[...prefix, sessionId, n]`), with its expiry
 *   time beside it. `load` checks that time itself (KV's `expireIn`, also set,
 *   only removes keys up to a minute late); `touch` slides it.
 * - Only JSON-safe records are stored: anything else is refused with a
 *   `TypeError` naming the path, such as `assigns.db is not JSON-safe (a Map)`.
 * - Writes replace the whole record atomically, checked against the version
 *   read, and retry on a lost race or "database is locked".
 *
 * @example
 * ```ts
 * import { KvSessionStore } from "@anubis/session-kv";
 * import assert from "node:assert/strict";
 * const kv = await Deno.openKv(":memory:");
 * const sessions = new KvSessionStore(kv);
 * await sessions.save({
 *   v: 1, id: "s1", protocolVersion: "2025-11-25", clientInfo: { name: "c", version: "1" },
 *   clientCapabilities: {}, initialized: true, subscriptions: [], assigns: { userId: 7 },
 *   updatedAt: Date.now(),
 * }, 30 * 60_000);
 * assert.deepEqual((await sessions.load("s1"))?.assigns, { userId: 7 });
 * kv.close();
 * ```
 */
export class KvSessionStore implements SessionStore {
  readonly #kv: KvLike;
  readonly #prefix: readonly KvKeyPart[];
  readonly #retryMs: number;
  readonly #closeKv: boolean;
  readonly #now: () => number;
  readonly #file: { assertUsable(): void } | undefined;

  /**
   * Creates a store on `kv`.
   *
   * @param kv The database (the store does not close it unless `closeKv`).
   * @param options Prefix, retry and clock settings.
   */
  constructor(kv: KvLike, options: KvSessionStoreOptions = {}) {
    this.#kv = kv;
    this.#prefix = options.prefix ?? ["anubis", "sessions"];
    this.#retryMs = options.retryTimeoutMs ?? 10_000;
    this.#closeKv = options.closeKv ?? false;
    this.#now = options.now ?? Date.now;
    this.#file = options.file;
  }

  /**
   * Writes (or replaces) a record that loads for `ttlMs` from now.
   *
   * @param record The record.
   * @param ttlMs Time to live in milliseconds.
   * @throws {TypeError} When part of the record is not JSON-safe (naming it).
   * @throws {RangeError} When the record is over ~700 KiB of JSON.
   *
   * @example
   * ```ts
   * import { KvSessionStore } from "@anubis/session-kv";
   * import assert from "node:assert/strict";
   * const kv = await Deno.openKv(":memory:");
   * const record = {
   *   v: 1 as const, id: "s1", protocolVersion: "2025-11-25", clientInfo: { name: "c", version: "1" },
   *   clientCapabilities: {}, initialized: true, subscriptions: [], updatedAt: 0,
   * };
   * await assert.rejects(
   *   new KvSessionStore(kv).save({ ...record, assigns: { db: new Map() as never } }, 60_000),
   *   { name: "TypeError", message: /assigns\.db/ },
   * );
   * kv.close();
   * ```
   */
  async save(record: SessionRecord, ttlMs: number): Promise<void> {
    this.#file?.assertUsable();
    assertJsonSafe(record.assigns, "assigns");
    assertJsonSafe(record, "session record");
    const lifetime = ttl(ttlMs);
    const bytes = encoder.encode(JSON.stringify(record));
    await this.#update(record.id, () => ({ bytes, ttlMs: lifetime }));
  }

  /**
   * Reads a record; unknown and expired ids give `undefined`.
   *
   * @param id The session id.
   * @returns The record, or `undefined`.
   *
   * @example
   * ```ts
   * import { KvSessionStore } from "@anubis/session-kv";
   * import assert from "node:assert/strict";
   * const kv = await Deno.openKv(":memory:");
   * assert.equal(await new KvSessionStore(kv).load("nobody"), undefined);
   * kv.close();
   * ```
   */
  async load(id: string): Promise<SessionRecord | undefined> {
    this.#file?.assertUsable();
    const value = await retryLocked(
      () => readChunked<RecordHeader>(this.#kv, this.#key(id)),
      this.#retryMs,
    );
    if (!value || value.header.expiresAt <= this.#now()) return undefined;
    return JSON.parse(decoder.decode(value.bytes)) as SessionRecord;
  }

  /**
   * Makes a live record load for `ttlMs` from now; unknown and expired ids
   * are ignored.
   *
   * @param id The session id.
   * @param ttlMs Time to live in milliseconds.
   *
   * @example
   * ```ts
   * import { KvSessionStore } from "@anubis/session-kv";
   * const kv = await Deno.openKv(":memory:");
   * await new KvSessionStore(kv).touch("nobody", 60_000); // no-op
   * kv.close();
   * ```
   */
  async touch(id: string, ttlMs: number): Promise<void> {
    this.#file?.assertUsable();
    const lifetime = ttl(ttlMs);
    await this.#update(
      id,
      (current) => current && { bytes: current, ttlMs: lifetime },
    );
  }

  /**
   * Removes a record. Idempotent.
   *
   * @param id The session id.
   *
   * @example
   * ```ts
   * import { KvSessionStore } from "@anubis/session-kv";
   * const kv = await Deno.openKv(":memory:");
   * await new KvSessionStore(kv).delete("nobody");
   * kv.close();
   * ```
   */
  async delete(id: string): Promise<void> {
    this.#file?.assertUsable();
    const key = this.#key(id);
    await retryLocked(async () => {
      const op = this.#kv.atomic().delete(key);
      for await (const part of this.#kv.list({ prefix: key })) {
        op.delete(part.key as KvKey);
      }
      await op.commit();
    }, this.#retryMs);
  }

  /**
   * Every live record (not expired), in key order: what a change raised on
   * one instance must reach, wherever each session's stream lives. A record
   * deleted or rewritten while the list runs is skipped or read as it is.
   *
   * @returns The records.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { KvSessionStore } from "@anubis/session-kv";
   * const kv = await Deno.openKv(":memory:");
   * const store = new KvSessionStore(kv);
   * const record = {
   *   v: 1 as const, id: "s1", protocolVersion: "2025-11-25", clientInfo: { name: "c", version: "1" },
   *   clientCapabilities: {}, initialized: true, subscriptions: [], assigns: {}, updatedAt: 0,
   * };
   * await store.save(record, 60_000);
   * const ids = [];
   * for await (const r of store.records()) ids.push(r.id);
   * assert.deepEqual(ids, ["s1"]);
   * kv.close();
   * ```
   */
  async *records(): AsyncIterable<SessionRecord> {
    this.#file?.assertUsable();
    const prefix = [...this.#prefix];
    const heads = this.#kv.list<Uint8Array>({ prefix }, { batchSize: 500 });
    for await (const head of heads) {
      if (head.key.length !== prefix.length + 1) continue; // a part of a big record
      const id = head.key[prefix.length];
      if (typeof id !== "string") continue;
      let header: RecordHeader & { parts: number };
      let first: Uint8Array;
      try {
        ({ header, first } = readHead<RecordHeader>(head.value));
      } catch {
        continue;
      }
      if (header.expiresAt <= this.#now()) continue;
      if (header.parts === 1) {
        yield JSON.parse(decoder.decode(first)) as SessionRecord;
        continue;
      }
      const record = await this.load(id);
      if (record) yield record;
    }
  }

  /**
   * Closes the database if the store was made with `closeKv`.
   *
   * @example
   * ```ts
   * import { KvSessionStore } from "@anubis/session-kv";
   * new KvSessionStore(await Deno.openKv(":memory:"), { closeKv: true }).close();
   * ```
   */
  close(): void {
    if (this.#closeKv) this.#kv.close();
  }

  /**
   * Replaces the record with what `next` makes of the live one (`undefined`
   * when missing or expired), or leaves it when `next` returns nothing; the
   * replacement only commits if the record did not change since it was read.
   */
  async #update(
    id: string,
    next: (
      current: Uint8Array | undefined,
    ) => { bytes: Uint8Array; ttlMs: number } | undefined,
  ): Promise<void> {
    const key = this.#key(id);
    const deadline = Date.now() + this.#retryMs;
    for (let attempt = 0;; attempt++) {
      const current = await retryLocked(
        () => readChunked<RecordHeader>(this.#kv, key),
        this.#retryMs,
      );
      const live = current && current.header.expiresAt > this.#now() ? current.bytes : undefined;
      const write = next(live);
      if (!write) return;
      const writes = chunkWrites(
        key,
        { expiresAt: this.#now() + write.ttlMs },
        write.bytes,
      );
      if (writes.length > MAX_PARTS_PER_COMMIT) {
        throw new RangeError(
          `Session ${id} is too large to store (${write.bytes.length} bytes of JSON; a record ` +
            `may take at most ${MAX_PARTS_PER_COMMIT * CHUNK_BYTES})`,
        );
      }
      const op = this.#kv.atomic().check({
        key,
        versionstamp: current?.versionstamp ?? null,
      });
      for (const w of writes) op.set(w.key, w.value, { expireIn: write.ttlMs });
      for (
        let part = writes.length;
        part < (current?.header.parts ?? 0);
        part++
      ) {
        op.delete([...key, part]);
      }
      if ((await retryLocked(() => op.commit(), this.#retryMs)).ok) return;
      if (Date.now() >= deadline) {
        throw new Error(`Could not write session ${id}: kept losing races`);
      }
      await backoff(attempt);
    }
  }

  #key(id: string): KvKey {
    return [...this.#prefix, id];
  }
}
