/**
 * The legacy sessions of one HTTP handler: crypto-random ids, a bound on
 * their number, idle expiry, persistence to an optional `SessionStore`, and
 * recovery of sessions another instance (or an earlier process) created.
 *
 * @module
 */

import type { EventStore, NotificationBus, SessionRecord, SessionStore } from "@anubis/core";
import { ErrorCode, logger, McpError } from "@anubis/core";
import type {
  Engine,
  Exchange,
  JsonRpcErrorResponse,
  JsonRpcMessage,
  JsonRpcResultResponse,
  Session,
} from "@anubis/core/engine";
import {
  type RetainedBudget,
  retainedBytes,
  type RetainedRefusal,
  stringBytes,
} from "../_byte_budgets.ts";
import type { SessionBusMessage } from "./session_bus_message.ts";
import type { SessionEntry } from "./_session_entry.ts";
import { ClientHoldings } from "../_fair_share.ts";
import { SessionLinks } from "./_session_links.ts";
import {
  DEFAULT_STORED_BYTES,
  DEFAULT_STORED_BYTES_PER_CLIENT,
  notStored,
  SessionNotStored,
  StoredBytes,
  utf8Length,
} from "./_session_store_budget.ts";
import { StandaloneStream, type StandaloneStreamOptions } from "./_standalone_stream.ts";

/**
 * Options of a {@link SessionTable}.
 *
 * @example
 * ```ts
 * import type { SessionTableOptions } from "./_session_table.ts";
 * const options: SessionTableOptions = {
 *   maxSessions: 100,
 *   idleMs: 60_000,
 *   stream: { retryMs: 3_000, graceMs: 60_000, keepAliveMs: 15_000 },
 * };
 * ```
 */
export interface SessionTableOptions {
  /** The most live sessions; `initialize` is refused beyond it. */
  maxSessions: number;
  /**
   * The most live sessions one client may hold (see {@link SessionTable.clientFull});
   * default: no bound but `maxSessions`.
   */
  maxSessionsPerClient?: number;
  /** A session with no message and no open stream for this long expires. */
  idleMs: number;
  /**
   * A session whose client has not sent `notifications/initialized` expires
   * after this long without a message (default 10 s), and when the table is
   * full the oldest such session makes room for a new one: a flood of bare
   * `initialize` requests cannot lock finished sessions' clients out.
   */
  handshakeMs?: number;
  /** Persists sessions (saved after `initialize` and whenever their record changes). */
  sessionStore?: SessionStore;
  /**
   * The most bytes of session records (JSON) one client's live sessions may
   * have in the session store (default 16 MiB): beyond it a save first makes
   * room by deleting the client's own unfinished handshakes, else is refused.
   */
  maxStoredBytesPerClient?: number;
  /** The most bytes of session records all live sessions may have in the session store (default 256 MiB). */
  maxStoredBytes?: number;
  /**
   * Joins the tables of other instances sharing the stores: one standalone
   * stream per session across them, and client answers reaching the
   * instance that asked.
   */
  sessionBus?: NotificationBus<SessionBusMessage>;
  /**
   * Bounds what sessions retain of their clients' data, per session, per
   * client and in total (see {@link SessionTable.reserve}); default: no bound.
   */
  retained?: RetainedBudget;
  /** The most server-to-client requests a session's client may have to answer at once (default 100). */
  maxPendingRequests?: number;
  /** The standalone stream settings, with the event store if any. */
  stream: { eventStore?: EventStore; retryMs: number; graceMs: number; keepAliveMs: number };
}

/**
 * Why a session left the table: the client's DELETE, idle expiry, shutdown,
 * a DELETE at another instance, or a handshake that did not complete
 * (`refused`: not logged, the session never opened).
 */
export type SessionEndReason =
  | "deleted"
  | "expired"
  | "evicted"
  | "shutdown"
  | "ended elsewhere"
  | "refused"
  | "not stored";

/** How many of the largest holders a full table looks at for an idle session to take back. */
const VICTIMS_LOOKED_AT = 16;

const HEX_DIGITS = new TextEncoder().encode("0123456789abcdef");
const ID_BYTES = 16;
/** CSPRNG output, drawn 256 ids at a time and used once each. */
const randomPool = new Uint8Array(ID_BYTES * 256);
let poolOffset = randomPool.length;
const idDigits = new Uint8Array(ID_BYTES * 2);
const asciiDecoder = new TextDecoder();

/** Makes a session id: 128 bits from the platform's CSPRNG, as hex (visible ASCII). */
function newSessionId(): string {
  if (poolOffset === randomPool.length) {
    crypto.getRandomValues(randomPool);
    poolOffset = 0;
  }
  for (let i = 0; i < ID_BYTES; i++) {
    const byte = randomPool[poolOffset + i];
    idDigits[2 * i] = HEX_DIGITS[byte >> 4];
    idDigits[2 * i + 1] = HEX_DIGITS[byte & 15];
  }
  poolOffset += ID_BYTES;
  // Decoded as one flat string: appending 16 pieces would build a rope, which
  // the session map would first have to flatten to hash it.
  return asciiDecoder.decode(idDigits);
}

/** Whether a session may make room: its handshake never finished and nothing holds it. */
function evictable({ session, stream }: SessionEntry): boolean {
  return !session.initialized && !stream?.attached && session.inflightCount === 0;
}

/**
 * The least recently used of a client's sessions that nothing holds (no
 * attached stream, no request in flight), if any: the one a full table
 * takes back for a client holding fewer. Walks the client's sessions (at
 * most its bound), and only when the table is full.
 */
function leastRecentlyUsed(entries: ReadonlySet<SessionEntry>): SessionEntry | undefined {
  let victim: SessionEntry | undefined;
  for (const entry of entries) {
    const { session, stream } = entry;
    if (stream?.attached || session.inflightCount > 0) continue;
    if (victim === undefined || session.lastActivity < victim.session.lastActivity) victim = entry;
  }
  return victim;
}

/** Whether a session bound to `owner` (unbound: `undefined`) is open to `principal`. */
function ownedBy(owner: string | undefined, principal: string): boolean {
  return owner === undefined || owner === principal;
}

/**
 * The error of a subscription the retained budget refuses: the client's
 * share, or the server's total.
 */
function retainedError(refused: RetainedRefusal, budget: RetainedBudget): McpError {
  return new McpError(
    ErrorCode.INTERNAL_ERROR,
    refused === "client"
      ? `Too much session data for this client: its sessions may retain ${budget.perClient} bytes`
      : `Too much session data: the server's sessions may retain ${budget.max} bytes`,
  );
}

/** The record without its timestamp, as compared to skip saving an unchanged record. */
function savedKey(record: SessionRecord): string {
  return JSON.stringify({ ...record, updatedAt: 0 });
}

/**
 * The session map of one handler.
 *
 * @example
 * ```ts
 * import { defineServer } from "@anubis/core";
 * import { Engine } from "@anubis/core/engine";
 * import { createDefaultRegistry } from "@anubis/dialects";
 * import { SessionTable } from "./_session_table.ts";
 * import assert from "node:assert/strict";
 * const engine = new Engine(defineServer({ name: "s", version: "1" }), {
 *   registry: createDefaultRegistry(),
 * });
 * const table = new SessionTable(engine, {
 *   maxSessions: 1,
 *   idleMs: 60_000,
 *   stream: { retryMs: 1000, graceMs: 1000, keepAliveMs: 0 },
 * });
 * const entry = table.create();
 * assert.equal(entry?.session.id?.length, 32);
 * entry!.session.markInitialized(); // a finished handshake is not displaced
 * assert.equal(table.create(), undefined);
 * table.close();
 * engine.close();
 * ```
 */
export class SessionTable {
  readonly #engine: Engine;
  readonly #options: SessionTableOptions;
  readonly #entries = new Map<string, SessionEntry>();
  /** Each client's sessions, oldest first, and who holds the most. */
  readonly #byClient = new ClientHoldings<SessionEntry>();
  /** Restores under way, by session id, with the principal each is for. */
  readonly #restoring = new Map<
    string,
    { principal: string; done: Promise<SessionEntry | "full" | undefined> }
  >();
  readonly #links: SessionLinks;
  readonly #streamOptions: StandaloneStreamOptions;
  #nextSweep = 0;
  readonly #handshakeMs: number;
  /** The bytes of records the live sessions have in the session store (and those being deleted). */
  readonly #stored: StoredBytes;
  /** The deletes of records under way. */
  readonly #forgetting = new Set<Promise<void>>();
  // One function for every session's messages (a closure per session would
  // be kept as long as the session).
  readonly #deliver = (message: JsonRpcMessage, session: Session) => this.#send(session, message);
  // One function for every session's subscriptions, charged to the retained budget.
  readonly #retain = (session: Session, value: string, kept: boolean) =>
    this.#retainValue(session, value, kept);

  /**
   * Creates the table.
   *
   * @param engine The engine that owns the sessions.
   * @param options Limits, stores and stream settings.
   */
  constructor(engine: Engine, options: SessionTableOptions) {
    this.#engine = engine;
    this.#options = options;
    this.#handshakeMs = options.handshakeMs ?? 10_000;
    this.#stored = new StoredBytes({
      perClient: options.maxStoredBytesPerClient ?? DEFAULT_STORED_BYTES_PER_CLIENT,
      total: options.maxStoredBytes ?? DEFAULT_STORED_BYTES,
    });
    // Store ids order GETs across instances only when every instance appends
    // to the same store; otherwise an announced GET simply closes the one here.
    const ordered = options.sessionBus !== undefined && options.stream.eventStore?.shared === true;
    this.#streamOptions = { ...options.stream, ordered };
    this.#links = new SessionLinks(options, (id) => this.#entries.get(id));
  }

  /**
   * The number of live sessions.
   *
   * @example
   * ```ts
   * import { defineServer } from "@anubis/core";
   * import { Engine } from "@anubis/core/engine";
   * import { createDefaultRegistry } from "@anubis/dialects";
   * import { SessionTable } from "./_session_table.ts";
   * import assert from "node:assert/strict";
   * const engine = new Engine(defineServer({ name: "s", version: "1" }), {
   *   registry: createDefaultRegistry(),
   * });
   * const stream = { retryMs: 1000, graceMs: 1000, keepAliveMs: 0 };
   * const table = new SessionTable(engine, { maxSessions: 10, idleMs: 60_000, stream });
   * table.create();
   * table.create();
   * assert.equal(table.size, 2);
   * table.close();
   * engine.close();
   * ```
   */
  get size(): number {
    return this.#entries.size;
  }

  /**
   * The bound on what sessions retain of their clients' data, if any.
   *
   * @example
   * ```ts
   * import { defineServer } from "@anubis/core";
   * import { Engine } from "@anubis/core/engine";
   * import { createDefaultRegistry } from "@anubis/dialects";
   * import { SessionTable } from "./_session_table.ts";
   * import assert from "node:assert/strict";
   * const engine = new Engine(defineServer({ name: "s", version: "1" }), {
   *   registry: createDefaultRegistry(),
   * });
   * const stream = { retryMs: 1000, graceMs: 1000, keepAliveMs: 0 };
   * const table = new SessionTable(engine, { maxSessions: 10, idleMs: 60_000, stream });
   * assert.equal(table.retained, undefined);
   * table.close();
   * engine.close();
   * ```
   */
  get retained(): RetainedBudget | undefined {
    return this.#options.retained;
  }

  /**
   * Seconds until a full table can have room again: when its stalest session
   * can expire (at least 1). A `Retry-After` that says so.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { defineServer } from "@anubis/core";
   * import { Engine } from "@anubis/core/engine";
   * import { createDefaultRegistry } from "@anubis/dialects";
   * import { SessionTable } from "./_session_table.ts";
   * const engine = new Engine(defineServer({ name: "s", version: "1" }), {
   *   registry: createDefaultRegistry(),
   * });
   * const stream = { retryMs: 1000, graceMs: 1000, keepAliveMs: 0 };
   * const table = new SessionTable(engine, { maxSessions: 1, idleMs: 60_000, stream });
   * table.create()!.session.markInitialized();
   * assert.equal(table.create(), undefined); // full of finished sessions
   * assert.equal(table.retryAfterSeconds, 60);
   * table.close();
   * engine.close();
   * ```
   */
  get retryAfterSeconds(): number {
    return Math.max(1, Math.ceil((this.#nextSweep - Date.now()) / 1000));
  }

  /**
   * Creates a session with a fresh id, or returns `undefined` when the table
   * is full (after expiring idle sessions, and evicting the oldest session
   * whose handshake never finished).
   *
   * @param client Who opens it, for the per-client bounds.
   * @param retained Bytes {@link reserve} charged for its handshake data: the
   *   entry's from now on (given back when it leaves, or at once when no
   *   session is made).
   * @returns The entry.
   *
   * @example
   * ```ts
   * import { defineServer } from "@anubis/core";
   * import { Engine } from "@anubis/core/engine";
   * import { createDefaultRegistry } from "@anubis/dialects";
   * import { SessionTable } from "./_session_table.ts";
   * import assert from "node:assert/strict";
   * const engine = new Engine(defineServer({ name: "s", version: "1" }), {
   *   registry: createDefaultRegistry(),
   * });
   * const stream = { retryMs: 1000, graceMs: 1000, keepAliveMs: 0 };
   * const table = new SessionTable(engine, { maxSessions: 10, idleMs: 60_000, stream });
   * const entry = table.create();
   * assert.match(entry?.session.id ?? "", /^[0-9a-f]{32}$/);
   * assert.equal(entry?.session.transport, "http");
   * table.close();
   * engine.close();
   * ```
   */
  create(client?: string, retained = 0): SessionEntry | undefined {
    if (this.#full(client ?? "")) {
      if (retained !== 0) this.#options.retained?.release(client, retained);
      return undefined;
    }
    const session = this.#engine.createSession({
      id: newSessionId(),
      transport: "http",
      onMessage: this.#deliver,
      onRetain: this.#options.retained && this.#retain,
      maxPendingRequests: this.#options.maxPendingRequests,
    });
    const entry = this.#register(session);
    if (retained !== 0) entry.retained = retained;
    if (client !== undefined) {
      entry.client = client;
      this.#byClient.add(client, entry);
    }
    return entry;
  }

  /**
   * Whether a client holds as many sessions as `maxSessionsPerClient`
   * allows, after making room by expiring its own oldest session whose
   * handshake never finished: a client that floods `initialize` displaces
   * only its own sessions, and others keep room in the table.
   *
   * @param client Who asks; `undefined` is never full.
   * @returns `true` when the client may open no session now.
   *
   * @example
   * ```ts
   * import { defineServer } from "@anubis/core";
   * import { Engine } from "@anubis/core/engine";
   * import { createDefaultRegistry } from "@anubis/dialects";
   * import { SessionTable } from "./_session_table.ts";
   * const engine = new Engine(defineServer({ name: "s", version: "1" }), {
   *   registry: createDefaultRegistry(),
   * });
   * const stream = { retryMs: 1000, graceMs: 1000, keepAliveMs: 0 };
   * const table = new SessionTable(engine, {
   *   maxSessions: 10,
   *   maxSessionsPerClient: 1,
   *   idleMs: 60_000,
   *   stream,
   * });
   * table.create("10.0.0.1")!.session.markInitialized();
   * if (!table.clientFull("10.0.0.1")) throw new Error("one finished session is the bound");
   * if (table.clientFull("10.0.0.2")) throw new Error("another client has room");
   * table.close();
   * engine.close();
   * ```
   */
  clientFull(client: string | undefined): boolean {
    const max = this.#options.maxSessionsPerClient;
    if (client === undefined || max === undefined) return false;
    const held = this.#byClient.of(client);
    if (!held || held.size < max) return false;
    for (const entry of held) {
      if (!evictable(entry)) continue;
      this.#expire(entry);
      return false;
    }
    return true;
  }

  /**
   * Charges a new session's handshake data (`bytes`, as `retainedBytes`
   * estimates it) to its client's share and to the total of the retained
   * budget, making room first as `clientFull` does: by expiring the
   * client's own (for its share) or the table's (for the total) oldest
   * sessions whose handshake never finished. Pass the bytes to
   * {@link create}. Without a budget nothing is charged.
   *
   * @param client Who opens the session.
   * @param bytes What its handshake data holds.
   * @returns What refused it, or `undefined` when charged.
   *
   * @example
   * ```ts
   * import { defineServer } from "@anubis/core";
   * import { Engine } from "@anubis/core/engine";
   * import { createDefaultRegistry } from "@anubis/dialects";
   * import { RetainedBudget } from "../_byte_budgets.ts";
   * import { SessionTable } from "./_session_table.ts";
   * import assert from "node:assert/strict";
   * const engine = new Engine(defineServer({ name: "s", version: "1" }), {
   *   registry: createDefaultRegistry(),
   * });
   * const stream = { retryMs: 1000, graceMs: 1000, keepAliveMs: 0 };
   * const retained = new RetainedBudget(100, 150, 1000);
   * const table = new SessionTable(engine, { maxSessions: 10, idleMs: 60_000, retained, stream });
   * assert.equal(table.reserve("a", 100), undefined);
   * table.create("a", 100)!.session.markInitialized();
   * assert.equal(table.reserve("a", 100), "client"); // a finished session is not displaced
   * assert.equal(table.reserve("b", 100), undefined);
   * table.close();
   * assert.equal(retained.total, 100); // b's reservation, never made a session
   * engine.close();
   * ```
   */
  reserve(client: string | undefined, bytes: number): RetainedRefusal | undefined {
    const budget = this.#options.retained;
    if (budget === undefined) return undefined;
    let refused = budget.charge(client, bytes);
    if (refused === undefined) return undefined;
    const pool = refused === "client" ? this.#byClient.of(client!) : this.#entries.values();
    // One pass, oldest first (deleting while iterating is safe for both).
    for (const entry of pool ?? []) {
      if (!entry.retained || !evictable(entry)) continue;
      this.#expire(entry);
      refused = budget.charge(client, bytes);
      if (refused === undefined) return undefined;
    }
    return refused;
  }

  /**
   * The session's standalone stream, made on first use.
   *
   * @param entry The session.
   * @returns Its stream.
   *
   * @example
   * ```ts
   * import { defineServer } from "@anubis/core";
   * import { Engine } from "@anubis/core/engine";
   * import { createDefaultRegistry } from "@anubis/dialects";
   * import { SessionTable } from "./_session_table.ts";
   * import assert from "node:assert/strict";
   * const engine = new Engine(defineServer({ name: "s", version: "1" }), {
   *   registry: createDefaultRegistry(),
   * });
   * const stream = { retryMs: 1000, graceMs: 1000, keepAliveMs: 0 };
   * const table = new SessionTable(engine, { maxSessions: 10, idleMs: 60_000, stream });
   * const entry = table.create()!;
   * assert.equal(entry.stream, undefined); // most sessions never open one
   * assert.equal(table.streamOf(entry) === table.streamOf(entry), true);
   * table.close();
   * engine.close();
   * ```
   */
  streamOf(entry: SessionEntry): StandaloneStream {
    return entry.stream ??= new StandaloneStream(entry.session.id!, this.#streamOptions);
  }

  /**
   * Whether a session with this id is live here or stored, without
   * restoring it (a store that cannot be read counts as not stored).
   *
   * @param id The `Mcp-Session-Id`.
   * @returns `true` when the session exists.
   *
   * @example
   * ```ts
   * import { defineServer } from "@anubis/core";
   * import { Engine } from "@anubis/core/engine";
   * import { createDefaultRegistry } from "@anubis/dialects";
   * import { SessionTable } from "./_session_table.ts";
   * const engine = new Engine(defineServer({ name: "s", version: "1" }), {
   *   registry: createDefaultRegistry(),
   * });
   * const stream = { retryMs: 1000, graceMs: 1000, keepAliveMs: 0 };
   * const table = new SessionTable(engine, { maxSessions: 10, idleMs: 60_000, stream });
   * const entry = table.create()!;
   * if (!await table.exists(entry.session.id!)) throw new Error("a live session exists");
   * if (await table.exists("0123456789abcdef")) throw new Error("an unknown one does not");
   * table.close();
   * engine.close();
   * ```
   */
  async exists(id: string): Promise<boolean> {
    if (this.#entries.has(id)) return true;
    const store = this.#options.sessionStore;
    return store !== undefined && await store.load(id).catch(() => undefined) !== undefined;
  }

  /**
   * Finds a live session, or restores it from the session store. With a
   * session store, a live session is checked against it (one read), so a
   * session ended on another instance is unknown here as well; when the
   * store cannot be read, the live session still answers. A session bound
   * to another principal (`Session.owner`, kept in its record) is unknown to
   * this one, and is not restored for it: the server's restore callbacks
   * never run with a stranger's request.
   *
   * @param id The `Mcp-Session-Id`.
   * @param exchange The request asking (for the restore callbacks).
   * @param principal The principal asking (`""`: none).
   * @returns The entry, `undefined` for an unknown or expired session, or
   * `"full"` when the session is stored but the table has no room for it.
   * @throws When the session store cannot be read, or the server refused to
   * restore the session (the caller answers an internal error).
   *
   * @example
   * ```ts
   * import { defineServer } from "@anubis/core";
   * import { Engine } from "@anubis/core/engine";
   * import { createDefaultRegistry } from "@anubis/dialects";
   * import { SessionTable } from "./_session_table.ts";
   * import assert from "node:assert/strict";
   * const engine = new Engine(defineServer({ name: "s", version: "1" }), {
   *   registry: createDefaultRegistry(),
   * });
   * const stream = { retryMs: 1000, graceMs: 1000, keepAliveMs: 0 };
   * const table = new SessionTable(engine, { maxSessions: 10, idleMs: 60_000, stream });
   * const entry = table.create()!;
   * assert.equal(await table.find(entry.session.id!, { transport: "http" }) === entry, true);
   * assert.equal(await table.find("0123456789abcdef", { transport: "http" }), undefined);
   * table.close();
   * engine.close();
   * ```
   */
  find(
    id: string,
    exchange: Exchange,
    principal = "",
  ): Promise<SessionEntry | "full" | undefined> {
    // Not async: a live session without a store to consult is found at once.
    try {
      const live = this.live(id, principal);
      if (live !== null) return Promise.resolve(live);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#find(id, exchange, principal);
  }

  /**
   * {@link find} without a promise when the table alone can answer: a live
   * session without a store to consult (or one whose handshake is under
   * way), or `undefined` for another principal's; `null` when only `find`
   * can tell (no live entry, or a store to ask). Expires idle sessions first,
   * as `find` does.
   *
   * @param id The `Mcp-Session-Id`.
   * @param principal The principal asking (`""`: none).
   * @returns The entry, `undefined`, or `null` for "ask `find`".
   *
   * @example
   * ```ts
   * import { defineServer } from "@anubis/core";
   * import { Engine } from "@anubis/core/engine";
   * import { createDefaultRegistry } from "@anubis/dialects";
   * import { SessionTable } from "./_session_table.ts";
   * import assert from "node:assert/strict";
   * const engine = new Engine(defineServer({ name: "s", version: "1" }), {
   *   registry: createDefaultRegistry(),
   * });
   * const stream = { retryMs: 1000, graceMs: 1000, keepAliveMs: 0 };
   * const table = new SessionTable(engine, { maxSessions: 10, idleMs: 60_000, stream });
   * const entry = table.create()!;
   * assert.equal(table.live(entry.session.id!), entry);
   * assert.equal(table.live("0123456789abcdef"), null);
   * table.close();
   * engine.close();
   * ```
   */
  live(id: string, principal = ""): SessionEntry | undefined | null {
    this.sweep(false);
    const entry = this.#entries.get(id);
    if (!entry || (this.#options.sessionStore && entry.session.initialized)) return null;
    return ownedBy(entry.session.owner, principal) ? entry : undefined;
  }

  async #find(
    id: string,
    exchange: Exchange,
    principal: string,
  ): Promise<SessionEntry | "full" | undefined> {
    const entry = this.#entries.get(id);
    const store = this.#options.sessionStore;
    if (entry) {
      if (!ownedBy(entry.session.owner, principal)) return undefined;
      // With a shared store another instance may have ended the session
      // (DELETE there): a live entry whose record is gone is gone here too.
      // A store that cannot answer does not stop a live session.
      if (!store || !entry.session.initialized) return entry;
      const record = await store.load(id).catch(() => true as const);
      if (record === true) return entry;
      if (record) return this.#refresh(entry, record);
      if (this.#entries.get(id) === entry) this.discard(entry, "ended elsewhere");
      return undefined;
    }
    if (!store) return undefined;
    const restoring = this.#restoring.get(id);
    if (restoring?.principal === principal) return await restoring.done;
    if (restoring) {
      // Another principal's restore: once it settled, the session is live
      // (and checked above) or was not restored for it.
      await restoring.done.catch(() => undefined);
      return await this.find(id, exchange, principal);
    }
    const done = this.#restore(id, exchange, principal).finally(() => this.#restoring.delete(id));
    this.#restoring.set(id, { principal, done });
    return await done;
  }

  /**
   * Saves the session's record when it changed since the last save, and
   * extends its TTL now and then otherwise.
   *
   * @param entry The session.
   * @throws When the store fails.
   *
   * @example
   * ```ts
   * import { defineServer, type SessionRecord, type SessionStore } from "@anubis/core";
   * import { Engine } from "@anubis/core/engine";
   * import { createDefaultRegistry } from "@anubis/dialects";
   * import { SessionTable } from "./_session_table.ts";
   * import assert from "node:assert/strict";
   * const engine = new Engine(defineServer({ name: "s", version: "1" }), {
   *   registry: createDefaultRegistry(),
   * });
   * const saved: SessionRecord[] = [];
   * const sessionStore: SessionStore = {
   *   save: (record) => Promise.resolve(void saved.push(record)),
   *   load: () => Promise.resolve(undefined),
   *   touch: () => Promise.resolve(),
   *   delete: () => Promise.resolve(),
   * };
   * const table = new SessionTable(engine, {
   *   maxSessions: 10,
   *   idleMs: 60_000,
   *   sessionStore,
   *   stream: { retryMs: 1000, graceMs: 1000, keepAliveMs: 0 },
   * });
   * const entry = table.create()!;
   * await engine.handle({
   *   jsonrpc: "2.0",
   *   id: 1,
   *   method: "initialize",
   *   params: {
   *     protocolVersion: "2025-06-18",
   *     capabilities: {},
   *     clientInfo: { name: "c", version: "1" },
   *   },
   * }, { transport: "http", session: entry.session });
   * await table.persist(entry);
   * await table.persist(entry); // unchanged: not saved again
   * assert.equal(saved.length, 1);
   * assert.equal(saved[0].protocolVersion, "2025-06-18");
   * table.close();
   * engine.close();
   * ```
   */
  persist(entry: SessionEntry): Promise<void> {
    // Not async: without a store (or a live, initialized session) nothing waits.
    if (!this.saves(entry)) return Promise.resolve();
    return this.#save(entry, this.#options.sessionStore!, entry.session);
  }

  /**
   * Whether {@link persist} has anything to do for the session (a store, and
   * a session with a version that is not closed), so that a caller with
   * nothing to persist answers without waiting on a promise.
   *
   * @param entry The session's entry.
   * @returns `false` when `persist` would resolve at once.
   *
   * @example
   * ```ts
   * import { defineServer } from "@anubis/core";
   * import { Engine } from "@anubis/core/engine";
   * import { createDefaultRegistry } from "@anubis/dialects";
   * import { SessionTable } from "./_session_table.ts";
   * import assert from "node:assert/strict";
   * const engine = new Engine(defineServer({ name: "s", version: "1" }), {
   *   registry: createDefaultRegistry(),
   * });
   * const stream = { retryMs: 1000, graceMs: 1000, keepAliveMs: 0 };
   * const table = new SessionTable(engine, { maxSessions: 10, idleMs: 60_000, stream });
   * assert.equal(table.saves(table.create()!), false); // no session store
   * table.close();
   * engine.close();
   * ```
   */
  saves(entry: SessionEntry): boolean {
    const session = entry.session;
    return this.#options.sessionStore !== undefined && session.dialect !== undefined &&
      !session.closed;
  }

  async #save(entry: SessionEntry, store: SessionStore, session: Session): Promise<void> {
    let record: SessionRecord;
    try {
      record = this.#engine.snapshot(session);
    } catch (error) {
      throw notStored(error, session.id!);
    }
    const key = savedKey(record);
    const now = Date.now();
    if (key !== entry.saved) {
      const bytes = utf8Length(key);
      if (this.#stored.over(entry, bytes) !== undefined) await this.#makeRoom(entry, bytes);
      // Counted from now: saves under way take their room too.
      const before = entry.storedBytes ?? 0;
      this.#stored.charge(entry, bytes);
      try {
        await store.save(record, this.#options.idleMs);
      } catch (error) {
        if (this.#entries.get(session.id!) === entry) this.#stored.charge(entry, before);
        throw notStored(error, session.id!);
      }
      if (this.#entries.get(session.id!) !== entry) {
        // Expired or evicted while the save ran: what it wrote goes too.
        this.#forget(session.id!, session.initialized, entry.client, bytes);
        return;
      }
      entry.saved = key;
      entry.touchedAt = now;
    } else if (now - entry.touchedAt > this.#options.idleMs / 10) {
      entry.touchedAt = now;
      await store.touch(session.id!, this.#options.idleMs);
    }
  }

  /**
   * Makes room in the store's byte budget for the entry's new record of
   * `bytes`: unfinished handshakes go first (the client's own for its
   * budget, the oldest in the table for the total), else the save is refused.
   */
  async #makeRoom(entry: SessionEntry, bytes: number): Promise<void> {
    for (let waits = 0;;) {
      const over = this.#stored.over(entry, bytes);
      if (over === undefined) return;
      const candidates = over === "client"
        ? this.#byClient.of(entry.client!)?.values() ?? [].values()
        : this.#entries.values();
      let evicted = false;
      for (const other of candidates) {
        if (other === entry || !other.storedBytes || !evictable(other)) continue;
        this.#expire(other);
        evicted = true;
        break;
      }
      if (evicted) continue;
      if (this.#forgetting.size > 0 && waits++ < 100) {
        // Records being deleted still count: room comes when a delete is done.
        await Promise.race(this.#forgetting);
        continue;
      }
      const budget = over === "client"
        ? `this client's ${
          this.#options.maxStoredBytesPerClient ?? DEFAULT_STORED_BYTES_PER_CLIENT
        }`
        : `the server's ${this.#options.maxStoredBytes ?? DEFAULT_STORED_BYTES}`;
      throw new SessionNotStored(
        `Session store budget exceeded: the session's record (${bytes} bytes) does not fit in ` +
          `${budget} bytes of stored sessions`,
        over === "client" ? 429 : 503,
        ErrorCode.INTERNAL_ERROR,
        true,
        this.retryAfterSeconds,
      );
    }
  }

  /**
   * Ends a session whose record could not be stored: its older record is
   * deleted, so that no instance restores a state it no longer has.
   *
   * @param entry The session.
   *
   * @example
   * ```ts
   * import { defineServer } from "@anubis/core";
   * import { Engine } from "@anubis/core/engine";
   * import { createDefaultRegistry } from "@anubis/dialects";
   * import { SessionTable } from "./_session_table.ts";
   * import assert from "node:assert/strict";
   * const engine = new Engine(defineServer({ name: "s", version: "1" }), {
   *   registry: createDefaultRegistry(),
   * });
   * const stream = { retryMs: 1000, graceMs: 1000, keepAliveMs: 0 };
   * const table = new SessionTable(engine, { maxSessions: 10, idleMs: 60_000, stream });
   * await table.unstorable(table.create()!);
   * assert.equal(table.size, 0);
   * table.close();
   * engine.close();
   * ```
   */
  async unstorable(entry: SessionEntry): Promise<void> {
    const id = entry.session.id!;
    this.discard(entry, "not stored");
    await this.#options.sessionStore?.delete(id).catch((error) =>
      logger.error("store.failed", `session store delete failed for session ${id}`, { error })
    );
  }

  /**
   * Keeps a session alive while the client holds its standalone stream, and
   * tells the other instances (see {@link SessionLinks.hold}).
   *
   * @param entry The session.
   * @param signal The connection's signal: aborts when it ends.
   *
   * @example
   * ```ts
   * import { defineServer } from "@anubis/core";
   * import { Engine } from "@anubis/core/engine";
   * import { createDefaultRegistry } from "@anubis/dialects";
   * import { SessionTable } from "./_session_table.ts";
   * import assert from "node:assert/strict";
   * const engine = new Engine(defineServer({ name: "s", version: "1" }), {
   *   registry: createDefaultRegistry(),
   * });
   * const stream = { retryMs: 1000, graceMs: 1000, keepAliveMs: 0 };
   * const table = new SessionTable(engine, { maxSessions: 10, idleMs: 60_000, stream });
   * const entry = table.create()!;
   * const connection = await table.streamOf(entry).attach(undefined, false);
   * table.hold(entry, connection.signal);
   * entry.session.touch(0); // the client POSTs nothing while it listens
   * await connection.readable.cancel(); // it leaves: its idle time counts from now
   * table.sweep(true);
   * assert.equal(table.size, 1);
   * table.close();
   * engine.close();
   * ```
   */
  hold(entry: SessionEntry, signal: AbortSignal): void {
    this.#links.hold(entry, signal);
  }

  /**
   * Delivers a client's answer to the request it answers, here or at the
   * instance that sent it (see {@link SessionLinks.answer}).
   *
   * @param entry The session.
   * @param response The client's response.
   *
   * @example
   * ```ts
   * import { defineServer } from "@anubis/core";
   * import { Engine } from "@anubis/core/engine";
   * import { createDefaultRegistry } from "@anubis/dialects";
   * import { SessionTable } from "./_session_table.ts";
   * import assert from "node:assert/strict";
   * const engine = new Engine(defineServer({ name: "s", version: "1" }), {
   *   registry: createDefaultRegistry(),
   * });
   * const stream = { retryMs: 1000, graceMs: 1000, keepAliveMs: 0 };
   * const table = new SessionTable(engine, { maxSessions: 10, idleMs: 60_000, stream });
   * const entry = table.create()!;
   * // Answers nothing this instance (or, without a session bus, any other) asked: dropped.
   * table.answer(entry, { jsonrpc: "2.0", id: "anubis-0123456789abcdef-1", result: {} });
   * assert.equal(table.size, 1);
   * table.close();
   * engine.close();
   * ```
   */
  answer(entry: SessionEntry, response: JsonRpcResultResponse | JsonRpcErrorResponse): void {
    this.#links.answer(entry, response);
  }

  /**
   * Ends a session on `DELETE`: its recorded events go first, and when that
   * fails nothing else changes (fail closed, so the client can retry).
   *
   * @param entry The session.
   * @throws When the event store or session store fails.
   *
   * @example
   * ```ts
   * import { defineServer } from "@anubis/core";
   * import { Engine } from "@anubis/core/engine";
   * import { createDefaultRegistry } from "@anubis/dialects";
   * import { SessionTable } from "./_session_table.ts";
   * import assert from "node:assert/strict";
   * const engine = new Engine(defineServer({ name: "s", version: "1" }), {
   *   registry: createDefaultRegistry(),
   * });
   * const stream = { retryMs: 1000, graceMs: 1000, keepAliveMs: 0 };
   * const table = new SessionTable(engine, { maxSessions: 10, idleMs: 60_000, stream });
   * const entry = table.create()!;
   * await table.end(entry);
   * assert.equal(table.size, 0);
   * assert.equal(entry.session.closed, true);
   * table.close();
   * engine.close();
   * ```
   */
  async end(entry: SessionEntry): Promise<void> {
    await this.#options.stream.eventStore?.delete(entry.session.id!);
    await this.#options.sessionStore?.delete(entry.session.id!);
    this.discard(entry, "deleted");
  }

  /**
   * Forgets a session locally (a failed handshake, idle expiry, shutdown).
   *
   * @param entry The session.
   * @param reason Why, for the operator's log (`session.closed`, or
   *   `session.expired`), written only for a session whose handshake succeeded.
   *
   * @example
   * ```ts
   * import { defineServer } from "@anubis/core";
   * import { Engine } from "@anubis/core/engine";
   * import { createDefaultRegistry } from "@anubis/dialects";
   * import { SessionTable } from "./_session_table.ts";
   * import assert from "node:assert/strict";
   * const engine = new Engine(defineServer({ name: "s", version: "1" }), {
   *   registry: createDefaultRegistry(),
   * });
   * const stream = { retryMs: 1000, graceMs: 1000, keepAliveMs: 0 };
   * const table = new SessionTable(engine, { maxSessions: 10, idleMs: 60_000, stream });
   * const entry = table.create()!;
   * table.discard(entry, "shutdown");
   * const found = await table.find(entry.session.id!, { transport: "http" });
   * assert.equal(table.size, 0);
   * assert.equal(found, undefined);
   * table.close();
   * engine.close();
   * ```
   */
  discard(entry: SessionEntry, reason: SessionEndReason = "refused"): void {
    const id = entry.session.id!;
    if (this.#entries.get(id) === entry) this.#entries.delete(id);
    else reason = "refused"; // already gone from the table: logged then, if ever
    if (reason !== "refused" && entry.session.dialect && !entry.session.closed) {
      const expired = reason === "expired";
      logger.info(
        expired ? "session.expired" : "session.closed",
        `session ${id} ${expired ? "expired" : `closed (${reason})`}`,
        { sessionId: id, reason, transport: "http" },
      );
    }
    this.#stored.release(entry);
    if (entry.retained) this.#options.retained?.release(entry.client, entry.retained);
    entry.retained = 0;
    if (entry.client !== undefined) this.#byClient.delete(entry.client, entry);
    entry.stream?.close();
    // Its tasks go with it, unless the session lives on elsewhere: a
    // shutdown, or an expiry here while a shared session store keeps it.
    const lives = reason === "shutdown" || (reason === "expired" && !!this.#options.sessionStore);
    this.#engine.dropSession(entry.session, lives);
  }

  /**
   * Expires sessions idle for longer than `idleMs` (a session with an
   * attached stream is never idle). Cheap to call on every request: it walks
   * the table at most once a second, and only once a session can have expired.
   *
   * @param force Sweep now rather than when the next session can expire.
   *
   * @example
   * ```ts
   * import { defineServer } from "@anubis/core";
   * import { Engine } from "@anubis/core/engine";
   * import { createDefaultRegistry } from "@anubis/dialects";
   * import { SessionTable } from "./_session_table.ts";
   * import assert from "node:assert/strict";
   * const engine = new Engine(defineServer({ name: "s", version: "1" }), {
   *   registry: createDefaultRegistry(),
   * });
   * const stream = { retryMs: 1000, graceMs: 1000, keepAliveMs: 0 };
   * const table = new SessionTable(engine, { maxSessions: 10, idleMs: 60_000, stream });
   * table.create();
   * table.create()!.session.touch(Date.now() - 120_000); // idle for two minutes
   * table.sweep(true);
   * assert.equal(table.size, 1);
   * table.close();
   * engine.close();
   * ```
   */
  sweep(force: boolean): void {
    const now = Date.now();
    if (!force && now < this.#nextSweep) return;
    const { idleMs } = this.#options;
    const handshakeMs = Math.min(this.#handshakeMs, idleMs);
    // No session expires before the stalest survivor's time runs out:
    // activity only moves that later, and sessions made later start fresh.
    let nextExpiry = now + idleMs;
    for (const entry of this.#entries.values()) {
      const { session, stream } = entry;
      const expiresAt = session.lastActivity + (session.initialized ? idleMs : handshakeMs);
      if (expiresAt > now || stream?.attached || session.inflightCount > 0) {
        nextExpiry = Math.min(nextExpiry, expiresAt);
        continue;
      }
      this.#expire(entry);
    }
    this.#nextSweep = Math.max(now + 1000, nextExpiry);
  }

  /**
   * Ends a session for this instance, with its stored record unless another
   * instance serves it, and its recorded events unless others share them.
   */
  #expire(entry: SessionEntry): void {
    const { session } = entry;
    const store = this.#options.stream.eventStore;
    const { client, storedBytes } = entry;
    this.discard(entry, "expired");
    if (entry.saved !== undefined) {
      this.#forget(session.id!, session.initialized, client, storedBytes ?? 0);
    }
    // The session is over for this instance; a shared session store keeps
    // its own TTL, so only the recorded events are dropped here (unless
    // other instances share them: the session may be busy there).
    if (store?.shared) return;
    store?.delete(session.id!).catch((error) =>
      logger.error("store.failed", `event store delete failed for session ${session.id}`, { error })
    );
  }

  /**
   * Deletes the stored record of a session this instance expired or evicted,
   * at once rather than when the store's TTL runs out, unless another
   * instance serves it: its record then finished the handshake this one
   * did not see, or is kept alive by that instance's touches.
   */
  #forget(id: string, initialized: boolean, client: string | undefined, bytes: number): void {
    const store = this.#options.sessionStore;
    if (!store) return;
    // Its bytes count toward the budgets until the record is gone.
    const leaving: SessionEntry = { session: undefined!, touchedAt: 0, client };
    this.#stored.charge(leaving, bytes);
    const done = store.load(id).then((record) => {
      if (record && (initialized || record.initialized)) return;
      return store.delete(id);
    }).catch((error) =>
      logger.error("store.failed", `session store delete failed for session ${id}`, { error })
    ).finally(() => {
      this.#stored.release(leaving);
      this.#forgetting.delete(done);
    });
    this.#forgetting.add(done);
  }

  /**
   * Closes every session and stream, and leaves the session bus.
   *
   * @example
   * ```ts
   * import { defineServer } from "@anubis/core";
   * import { Engine } from "@anubis/core/engine";
   * import { createDefaultRegistry } from "@anubis/dialects";
   * import { SessionTable } from "./_session_table.ts";
   * import assert from "node:assert/strict";
   * const engine = new Engine(defineServer({ name: "s", version: "1" }), {
   *   registry: createDefaultRegistry(),
   * });
   * const stream = { retryMs: 1000, graceMs: 1000, keepAliveMs: 0 };
   * const table = new SessionTable(engine, { maxSessions: 10, idleMs: 60_000, stream });
   * const entry = table.create()!;
   * const connection = await table.streamOf(entry).attach(undefined, false);
   * table.close();
   * assert.equal(table.size, 0);
   * assert.equal(connection.open, false);
   * assert.equal(entry.session.closed, true);
   * engine.close();
   * ```
   */
  close(): void {
    this.#links.close();
    for (const entry of [...this.#entries.values()]) this.discard(entry, "shutdown");
  }

  /**
   * Ends a session to make room for another client's: gone here and from
   * the stores, so its client's next request is answered 404 (session not
   * found) and it initializes again.
   */
  #evict(entry: SessionEntry): void {
    const id = entry.session.id!;
    this.discard(entry, "evicted");
    const failed = (error: unknown) =>
      logger.error("store.failed", `store delete failed for evicted session ${id}`, { error });
    this.#options.sessionStore?.delete(id).catch(failed);
    this.#options.stream.eventStore?.delete(id).catch(failed);
  }

  /**
   * Whether the table has no room for another session, after expiring idle
   * ones, evicting the oldest unfinished handshake, and (for a new session,
   * `client` given: `""` for one without a client) taking back the least
   * recently used idle session of the client holding the most, when it
   * holds at least two more than `client` does: a full table keeps serving
   * new clients while a few hold their bounds, and shares converge to equal.
   * A client holding one session never loses it this way.
   */
  #full(client?: string): boolean {
    // A sweep walks every session: forced only when the table is full, else
    // on its own schedule (sweeping on every initialize made n sessions O(n²)).
    this.sweep(this.#entries.size >= this.#options.maxSessions);
    if (this.#entries.size < this.#options.maxSessions) return false;
    // Insertion order is creation order: the first unfinished handshake is the oldest.
    for (const entry of this.#entries.values()) {
      if (!evictable(entry)) continue;
      this.#expire(entry);
      return false;
    }
    if (client === undefined) return true;
    let looked = 0;
    for (const [, entries] of this.#byClient.largest(this.#byClient.count(client))) {
      const victim = leastRecentlyUsed(entries);
      if (victim !== undefined) {
        this.#evict(victim);
        return false;
      }
      if (++looked === VICTIMS_LOOKED_AT) break;
    }
    return true;
  }

  /**
   * Takes what another instance changed in the session's record since this
   * one last saved or loaded it: the subscriptions and the log level (the
   * client may set them at any instance). Assigns stay as they are here.
   */
  #refresh(entry: SessionEntry, record: SessionRecord): SessionEntry {
    const key = savedKey(record);
    if (key === entry.saved) return entry;
    const { session } = entry;
    session.sync(record);
    entry.saved = key;
    return entry;
  }

  /** A subscription made or dropped: charged to the session and its client (see `onRetain`). */
  #retainValue(session: Session, value: string, kept: boolean): Error | undefined {
    const budget = this.#options.retained!;
    const entry = this.#entries.get(session.id!);
    if (entry?.session !== session) return undefined; // no longer in the table: nothing charged
    const held = entry.retained ?? 0;
    // The URI and its entry in the session's set.
    const bytes = stringBytes(value) + 32;
    if (!kept) {
      const back = Math.min(bytes, held); // what another instance synced was never charged
      budget.release(entry.client, back);
      entry.retained = held - back;
      return undefined;
    }
    if (held + bytes > budget.perSession) {
      return new McpError(
        ErrorCode.INVALID_PARAMS,
        `Invalid params: the session would retain more than ${budget.perSession} bytes of client data (capabilities, clientInfo and subscriptions)`,
      );
    }
    const refused = budget.charge(entry.client, bytes);
    if (refused !== undefined) return retainedError(refused, budget);
    entry.retained = held + bytes;
    return undefined;
  }

  #register(session: Session): SessionEntry {
    const entry: SessionEntry = {
      session,
      stream: undefined,
      saved: undefined,
      touchedAt: Date.now(),
    };
    this.#entries.set(session.id!, entry);
    return entry;
  }

  /**
   * A message for the standalone stream. Without a store and without a
   * stream it has nowhere to go; with a store it is recorded from the
   * session's start, since another instance may hold the client's stream.
   */
  #send(session: Session, message: JsonRpcMessage): Promise<void> | undefined {
    const entry = this.#entries.get(session.id!);
    if (entry?.session !== session) return undefined;
    const stream = entry.stream ??
      (this.#options.stream.eventStore ? this.streamOf(entry) : undefined);
    return stream?.send(message);
  }

  async #restore(
    id: string,
    exchange: Exchange,
    principal: string,
  ): Promise<SessionEntry | "full" | undefined> {
    const record = await this.#options.sessionStore!.load(id);
    if (!record || record.id !== id || !ownedBy(record.owner, principal)) return undefined;
    if (this.#full()) return "full";
    // What the record brings back into memory counts toward the total (not
    // to a client: a restored session has none here).
    const budget = this.#options.retained;
    const retained = budget === undefined ? 0 : retainedBytes(record, Infinity);
    if (budget?.charge(undefined, retained) !== undefined) return "full";
    // A refused restore (`handleSessionExpired` threw) rejects: the session
    // exists, so the caller answers an internal error, not 404.
    let session;
    try {
      session = await this.#engine.restoreSession(record, {
        id,
        transport: "http",
        onMessage: this.#deliver,
        onRetain: budget && this.#retain,
        maxPendingRequests: this.#options.maxPendingRequests,
      }, exchange);
    } catch (error) {
      budget?.release(undefined, retained);
      throw error;
    }
    const entry = this.#register(session);
    if (retained !== 0) entry.retained = retained;
    entry.saved = savedKey(record);
    this.#stored.charge(entry, utf8Length(entry.saved));
    logger.info("session.restored", `session ${id} restored from the session store`, {
      sessionId: id,
      protocolVersion: session.dialect?.version,
      transport: "http",
    });
    return entry;
  }
}
