/**
 * The `SessionStore` contract: persisted legacy sessions, so any instance can
 * restore a session another instance created.
 *
 * @module
 */

import type { ClientCapabilities, Implementation, JsonObject, LogLevel } from "./types.ts";

/**
 * What a store keeps of a legacy session. Every field is JSON-safe.
 *
 * @example
 * ```ts
 * import type { SessionRecord } from "@anubis/core";
 * const record: SessionRecord = {
 *   v: 1,
 *   id: "b4f1…",
 *   protocolVersion: "2025-11-25",
 *   clientInfo: { name: "inspector", version: "1.0.0" },
 *   clientCapabilities: {},
 *   initialized: true,
 *   subscriptions: [],
 *   assigns: { userId: 7 },
 *   updatedAt: Date.now(),
 * };
 * ```
 */
export interface SessionRecord {
  /** The record format version. */
  v: 1;
  /** The session id. */
  id: string;
  /** The negotiated protocol version. */
  protocolVersion: string;
  /** The client's identity from `initialize`. */
  clientInfo: Implementation;
  /** The client's capabilities from `initialize`. */
  clientCapabilities: ClientCapabilities;
  /** Whether `notifications/initialized` arrived. */
  initialized: boolean;
  /** The level set by `logging/setLevel`, if any. */
  logLevel?: LogLevel;
  /** URIs subscribed with `resources/subscribe`. */
  subscriptions: string[];
  /** The principal the session is bound to, if any (see `Session.owner`). */
  owner?: string;
  /** The frame's assigns after `serializeAssigns`. */
  assigns: JsonObject;
  /** When the record was last written (ms since the epoch). */
  updatedAt: number;
}

/**
 * Persists legacy sessions with a sliding TTL. Every method rejects when it
 * cannot do its work (stores fail closed).
 *
 * @example
 * ```ts
 * import type { SessionRecord, SessionStore } from "@anubis/core";
 * import assert from "node:assert/strict";
 * class MapSessionStore implements SessionStore {
 *   #records = new Map<string, { record: SessionRecord; expiresAt: number }>();
 *   save(record: SessionRecord, ttlMs: number): Promise<void> {
 *     this.#records.set(record.id, { record, expiresAt: Date.now() + ttlMs });
 *     return Promise.resolve();
 *   }
 *   load(id: string): Promise<SessionRecord | undefined> {
 *     const entry = this.#records.get(id);
 *     return Promise.resolve(entry && entry.expiresAt > Date.now() ? entry.record : undefined);
 *   }
 *   touch(id: string, ttlMs: number): Promise<void> {
 *     const entry = this.#records.get(id);
 *     if (entry) entry.expiresAt = Date.now() + ttlMs;
 *     return Promise.resolve();
 *   }
 *   delete(id: string): Promise<void> {
 *     this.#records.delete(id);
 *     return Promise.resolve();
 *   }
 * }
 * assert.equal(await new MapSessionStore().load("nope"), undefined);
 * ```
 */
export interface SessionStore {
  /**
   * Writes (or overwrites) a session record that expires `ttlMs` from now.
   *
   * @param record The record.
   * @param ttlMs Time to live in milliseconds.
   */
  save(record: SessionRecord, ttlMs: number): Promise<void>;
  /**
   * Reads a session record; expired or unknown ids give `undefined`.
   *
   * @param id The session id.
   * @returns The record, or `undefined`.
   */
  load(id: string): Promise<SessionRecord | undefined>;
  /**
   * Extends a record's life to `ttlMs` from now; unknown ids are ignored.
   *
   * @param id The session id.
   * @param ttlMs Time to live in milliseconds.
   */
  touch(id: string, ttlMs: number): Promise<void>;
  /**
   * Removes a record. Idempotent.
   *
   * @param id The session id.
   */
  delete(id: string): Promise<void>;
}
