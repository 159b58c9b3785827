/**
 * The part of the `Deno.Kv` API the KV stores use, typed structurally so a
 * `Deno.Kv` from `Deno.openKv()` and a `Kv` from `npm:@deno/kv` (Node) both fit.
 *
 * @module
 */

/**
 * One part of a KV key.
 *
 * @example
 * ```ts
 * import type { KvKeyPart } from "@anubis/core/kv";
 * const part: KvKeyPart = 1n;
 * ```
 */
export type KvKeyPart = Uint8Array | string | number | bigint | boolean;

/**
 * A KV key: parts compared one by one, so a session id is a part of its own
 * and never a string prefix of another session's keys.
 *
 * @example
 * ```ts
 * import type { KvKey } from "@anubis/core/kv";
 * const key: KvKey = ["anubis", "events", "session-a", "id"];
 * ```
 */
export type KvKey = readonly KvKeyPart[];

/**
 * A read result; `versionstamp` is `null` when the key does not exist.
 *
 * @example
 * ```ts
 * import type { KvEntryMaybe } from "@anubis/core/kv";
 * const missing: KvEntryMaybe<Uint8Array> = { key: ["k"], value: null, versionstamp: null };
 * ```
 */
export interface KvEntryMaybe<T> {
  /** The key. */
  key: readonly unknown[];
  /** The value, or `null`. */
  value: T | null;
  /** The version, or `null`. */
  versionstamp: string | null;
}

/**
 * An entry that exists.
 *
 * @example
 * ```ts
 * import type { KvEntry } from "@anubis/core/kv";
 * const entry: KvEntry<string> = { key: ["k"], value: "v", versionstamp: "00000000000000010000" };
 * ```
 */
export interface KvEntry<T> {
  /** The key. */
  key: readonly unknown[];
  /** The value. */
  value: T;
  /** The version. */
  versionstamp: string;
}

/**
 * A `KvU64` as read back (Deno's or `@deno/kv`'s class).
 *
 * @example
 * ```ts
 * import type { KvU64Like } from "@anubis/core/kv";
 * const counter: KvU64Like = { value: 3n };
 * ```
 */
export interface KvU64Like {
  /** The number. */
  readonly value: bigint;
}

/**
 * An atomic operation under construction.
 *
 * @example
 * ```ts ignore
 * import type { KvAtomic } from "@anubis/core/kv";
 * declare const op: KvAtomic;
 * await op.check({ key: ["n"], versionstamp: null }).sum(["n"], 1n).commit();
 * ```
 */
export interface KvAtomic {
  /** Fails the commit unless each key still has the given versionstamp. */
  check(...checks: { key: KvKey; versionstamp: string | null }[]): this;
  /** Writes a value. */
  set(key: KvKey, value: unknown, options?: { expireIn?: number }): this;
  /** Adds to a `KvU64` (a missing key counts as 0). */
  sum(key: KvKey, n: bigint): this;
  /** Removes a key. */
  delete(key: KvKey): this;
  /** Applies everything or nothing. */
  commit(): Promise<{ ok: true; versionstamp: string } | { ok: false }>;
}

/**
 * The KV database the stores are given: `Deno.Kv` or `@deno/kv`'s `Kv`.
 *
 * @example
 * ```ts
 * import type { KvLike } from "@anubis/core/kv";
 * const kv: KvLike = await Deno.openKv(":memory:");
 * kv.close();
 * ```
 */
export interface KvLike {
  /** Reads one key. */
  get<T = unknown>(key: KvKey): Promise<KvEntryMaybe<T>>;
  /** Lists keys under a prefix (optionally from `start` or until `end`), or in a range. */
  list<T = unknown>(
    selector: { prefix: KvKey; start?: KvKey; end?: KvKey } | { start: KvKey; end: KvKey },
    options?: { limit?: number; reverse?: boolean; batchSize?: number },
  ): AsyncIterable<KvEntry<T>>;
  /** Starts an atomic operation. */
  atomic(): KvAtomic;
  /** Streams the entries of `keys` whenever one changes (not across processes on a local file). */
  watch?(keys: KvKey[]): ReadableStream<KvEntryMaybe<unknown>[]>;
  /** Closes the database. */
  close(): void;
}
