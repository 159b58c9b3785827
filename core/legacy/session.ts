/**
 * The state of one legacy-era connection or HTTP session: the negotiated
 * dialect, the client's identity and capabilities, log level, resource
 * subscriptions, assigns, in-flight requests and server-to-client requests.
 *
 * @module
 */

import { Cancellation } from "../cancellation.ts";
import type { Dialect } from "../dialect.ts";
import { ErrorCode, McpError } from "../errors.ts";
import { EMPTY } from "../_objects.ts";
import type {
  JsonRpcErrorResponse,
  JsonRpcMessage,
  JsonRpcResultResponse,
  RequestId,
} from "../json_rpc.ts";
import * as s from "../schema.ts";
import type { SessionRecord } from "../session_store.ts";
import type { ClientCapabilities, Implementation, LogLevel } from "../types.ts";

/**
 * How a transport creates a session.
 *
 * @example
 * ```ts
 * import type { SessionOptions } from "@anubis/core/engine";
 * const options: SessionOptions = { id: crypto.randomUUID(), transport: "http" };
 * ```
 */
export interface SessionOptions {
  /** The session id (HTTP); stdio sessions have none. */
  id?: string;
  /** The transport kind. */
  transport: string;
  /**
   * Receives messages that belong to no request (list changes, resource
   * updates): the standalone SSE stream, or stdout. It gets the session too,
   * so one function can serve every session of a transport.
   */
  onMessage?: (message: JsonRpcMessage, session: Session) => void | Promise<void>;
  /**
   * Told when the client makes the session keep a value of its choosing, or
   * lets it go (today a subscribed URI: `kept` is `true` on
   * `resources/subscribe`, `false` on `resources/unsubscribe`), so the
   * transport can bound what sessions retain. Returning an error refuses
   * the value: the request that asked gets that error. Not called for what a
   * stored record or another instance brings (`restore`, `sync`). One
   * function can serve every session.
   */
  onRetain?: (session: Session, value: string, kept: boolean) => Error | undefined;
  /**
   * The most server-to-client requests (sampling, elicitation, roots) that
   * may wait for the client's answer at once (default 100): one more is not
   * sent, and `request` rejects with -32603 saying so.
   */
  maxPendingRequests?: number;
}

/** The default of {@link SessionOptions.maxPendingRequests}. */
const MAX_PENDING_REQUESTS = 100;

const KEEP_REASONS = { keepReasons: true };

/** The bits of `Session.#flags`. */
const INITIALIZED = 1, CLOSED = 2;

/** What {@link Session.subscriptions} reads before any subscription. */
const NO_SUBSCRIPTIONS: ReadonlySet<string> = new Set();

/** How every server-to-client request id begins: `anubis-<hex>-<n>`. */
const REQUEST_ID_HEAD = "anubis-";

/** A deep copy of JSON data with every object and array frozen. */
function frozenCopy<T>(value: T): T {
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return Object.freeze(value.map(frozenCopy)) as T;
  // A loop: a third of the time of fromEntries(entries()), on every initialize.
  const copy: Record<string, unknown> = {};
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    const item = frozenCopy((value as Record<string, unknown>)[key]);
    // JSON may carry an own "__proto__": keep it a key, never the prototype.
    if (key === "__proto__") {
      Object.defineProperty(copy, key, {
        value: item,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    } else copy[key] = item;
  }
  return Object.freeze(copy) as T;
}

function randomHex(bytes: number): string {
  let hex = "";
  for (const byte of crypto.getRandomValues(new Uint8Array(bytes))) {
    hex += byte.toString(16).padStart(2, "0");
  }
  return hex;
}

interface PendingRequest {
  method: string;
  resolve(result: unknown): void;
  reject(error: McpError): void;
}

/**
 * A legacy session. Create it with `Engine.createSession`; the engine fills
 * it in on `initialize`. Its state is written only through its methods, each
 * named for what happened (`completeHandshake`, `markInitialized`, `restore`,
 * `subscribe`, `touch`...); everything else reads it.
 *
 * @example
 * ```ts
 * import { Session } from "@anubis/core/engine";
 * import assert from "node:assert/strict";
 * const session = new Session({ transport: "stdio" });
 * assert.equal(session.initialized, false);
 * ```
 */
export class Session {
  /**
   * The session id, if the transport has one.
   *
   * @example
   * ```ts
   * import { Session } from "@anubis/core/engine";
   * import assert from "node:assert/strict";
   * const session = new Session({ id: "b4f1", transport: "http" });
   * assert.equal(session.id, "b4f1");
   * assert.equal(new Session({ transport: "stdio" }).id, undefined);
   * ```
   */
  readonly id?: string;
  /**
   * What names this session object among others: its {@link id}, or for a
   * session without one (stdio) a random UUID drawn on first use, the same
   * for the session's life. Tasks name their owner with it.
   *
   * @example
   * ```ts
   * import { Session } from "@anubis/core/engine";
   * import assert from "node:assert/strict";
   * assert.equal(new Session({ id: "b4f1", transport: "http" }).key, "b4f1");
   * const stdio = new Session({ transport: "stdio" });
   * assert.equal(stdio.key, stdio.key);
   * assert.notEqual(stdio.key, new Session({ transport: "stdio" }).key);
   * ```
   */
  get key(): string {
    return this.id || (this.#key ??= crypto.randomUUID());
  }
  /**
   * The transport kind.
   *
   * @example
   * ```ts
   * import { Session } from "@anubis/core/engine";
   * import assert from "node:assert/strict";
   * assert.equal(new Session({ transport: "stdio" }).transport, "stdio");
   * ```
   */
  readonly transport: string;
  /**
   * Receives messages that belong to no request.
   *
   * @example
   * ```ts
   * import { Session } from "@anubis/core/engine";
   * import assert from "node:assert/strict";
   * const heard: string[] = [];
   * const session = new Session({
   *   transport: "stdio",
   *   onMessage: (message) => void ("method" in message && heard.push(message.method)),
   * });
   * const changed = { jsonrpc: "2.0" as const, method: "notifications/tools/list_changed" };
   * await session.onMessage?.(changed, session);
   * assert.deepEqual(heard, ["notifications/tools/list_changed"]);
   * ```
   */
  readonly onMessage?: (message: JsonRpcMessage, session: Session) => void | Promise<void>;
  readonly #onRetain: SessionOptions["onRetain"];
  readonly #maxPending: number | undefined;
  /**
   * The negotiated dialect; `undefined` until `initialize` succeeded.
   *
   * @example
   * ```ts
   * import { Session } from "@anubis/core/engine";
   * import assert from "node:assert/strict";
   * const session = new Session({ transport: "stdio" });
   * assert.equal(session.dialect?.version, undefined);
   * ```
   */
  get dialect(): Dialect | undefined {
    return this.#dialect;
  }
  /**
   * The client's identity. Set once at `initialize` or restore; what is set
   * is copied and deep-frozen, so no handler can change what later requests
   * of the session see (a write throws a `TypeError` in strict code).
   *
   * @example
   * ```ts
   * import { Session } from "@anubis/core/engine";
   * import { v2025_11_25 } from "@anubis/dialects";
   * import assert from "node:assert/strict";
   * const session = new Session({ transport: "stdio" });
   * const info = { name: "inspector", version: "1.0.0" };
   * session.completeHandshake(v2025_11_25, info, {});
   * info.name = "changed";
   * assert.equal(session.clientInfo.name, "inspector");
   * assert.equal(Object.isFrozen(session.clientInfo), true);
   * assert.throws(() => {
   *   (session.clientInfo as { name: string }).name = "impostor";
   * }, TypeError);
   * ```
   */
  get clientInfo(): Partial<Implementation> {
    return this.#clientInfo;
  }
  /**
   * The client's capabilities; copied and deep-frozen like {@link clientInfo}.
   *
   * @example
   * ```ts
   * import { type ClientCapabilities } from "@anubis/core";
   * import { Session } from "@anubis/core/engine";
   * import { v2025_11_25 } from "@anubis/dialects";
   * import assert from "node:assert/strict";
   * const session = new Session({ transport: "stdio" });
   * const declared: ClientCapabilities = { roots: { listChanged: true } };
   * session.completeHandshake(v2025_11_25, {}, declared);
   * declared.sampling = {};
   * assert.deepEqual(session.clientCapabilities, { roots: { listChanged: true } });
   * assert.equal(Object.isFrozen(session.clientCapabilities.roots), true);
   * ```
   */
  get clientCapabilities(): ClientCapabilities {
    return this.#clientCapabilities;
  }
  /**
   * Whether `notifications/initialized` arrived.
   *
   * @example
   * ```ts
   * import { Session } from "@anubis/core/engine";
   * import assert from "node:assert/strict";
   * const session = new Session({ transport: "stdio" });
   * assert.equal(session.initialized, false);
   * session.markInitialized();
   * assert.equal(session.initialized, true);
   * ```
   */
  get initialized(): boolean {
    return (this.#flags & INITIALIZED) !== 0;
  }
  /**
   * The level set by `logging/setLevel`.
   *
   * @example
   * ```ts
   * import { Session } from "@anubis/core/engine";
   * import assert from "node:assert/strict";
   * const session = new Session({ transport: "stdio" });
   * assert.equal(session.logLevel, undefined);
   * session.setLogLevel("warning");
   * assert.equal(session.logLevel, "warning");
   * ```
   */
  get logLevel(): LogLevel | undefined {
    return this.#logLevel;
  }
  /**
   * The principal the session is bound to (`principalOf` of the caller that
   * opened it), when the transport binds sessions (the HTTP transport with
   * `auth`): kept in the session's record, so an instance that restores the
   * session binds it too, and a request from another principal finds no
   * session. `undefined`: not bound.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { Session } from "@anubis/core/engine";
   * const session = new Session({ id: "b4f1", transport: "http" });
   * assert.equal(session.owner, undefined);
   * session.bindOwner("ada");
   * assert.equal(session.owner, "ada");
   * ```
   */
  get owner(): string | undefined {
    return this.#owner;
  }
  /**
   * URIs the client subscribed to.
   *
   * @example
   * ```ts
   * import { Session } from "@anubis/core/engine";
   * import assert from "node:assert/strict";
   * const session = new Session({ transport: "stdio" });
   * session.subscribe("file:///notes/1");
   * assert.equal(session.subscriptions.size, 1);
   * ```
   */
  get subscriptions(): ReadonlySet<string> {
    return this.#subscriptions ?? NO_SUBSCRIPTIONS;
  }

  /**
   * Whether the client subscribed to a URI, without making the set.
   *
   * @param uri The resource URI.
   * @returns `true` when subscribed.
   *
   * @example
   * ```ts
   * import { Session } from "@anubis/core/engine";
   * import assert from "node:assert/strict";
   * const session = new Session({ transport: "stdio" });
   * assert.equal(session.isSubscribed("file:///notes/1"), false);
   * session.subscribe("file:///notes/1");
   * assert.equal(session.isSubscribed("file:///notes/1"), true);
   * ```
   */
  isSubscribed(uri: string): boolean {
    return this.#subscriptions?.has(uri) ?? false;
  }

  /**
   * The subscribed URIs, without making the set.
   *
   * @returns A new array.
   *
   * @example
   * ```ts
   * import { Session } from "@anubis/core/engine";
   * import assert from "node:assert/strict";
   * const session = new Session({ transport: "stdio" });
   * assert.deepEqual(session.subscribedUris(), []);
   * session.subscribe("file:///notes/1");
   * assert.deepEqual(session.subscribedUris(), [ "file:///notes/1" ]);
   * ```
   */
  subscribedUris(): string[] {
    return this.#subscriptions ? [...this.#subscriptions] : [];
  }
  /**
   * The frame's assigns, shared by every request of the session.
   *
   * @example
   * ```ts
   * import { Session } from "@anubis/core/engine";
   * import assert from "node:assert/strict";
   * const session = new Session({ transport: "stdio" });
   * session.assigns.value.userId = 7;
   * assert.deepEqual(session.assigns.value, { userId: 7 });
   * ```
   */
  get assigns(): { value: Record<string, unknown> } {
    // Made on first use: a session that never runs a handler holds none.
    return this.#assigns ??= { value: {} };
  }
  /**
   * When the session last received a message (ms since the epoch).
   *
   * @example
   * ```ts
   * import { Session } from "@anubis/core/engine";
   * import assert from "node:assert/strict";
   * const session = new Session({ transport: "stdio" });
   * assert.equal(Date.now() - session.lastActivity < 1000, true);
   * ```
   */
  get lastActivity(): number {
    return this.#lastActivity;
  }
  /**
   * When the session object was made (`performance.now()`), for its duration.
   *
   * @example
   * ```ts
   * import { Session } from "@anubis/core/engine";
   * import assert from "node:assert/strict";
   * const session = new Session({ transport: "stdio" });
   * assert.equal(performance.now() - session.openedAt >= 0, true);
   * ```
   */
  readonly openedAt: number = performance.now();
  /**
   * Whether the session was closed.
   *
   * @example
   * ```ts
   * import { Session } from "@anubis/core/engine";
   * import assert from "node:assert/strict";
   * const session = new Session({ transport: "stdio" });
   * assert.equal(session.closed, false);
   * session.close();
   * assert.equal(session.closed, true);
   * ```
   */
  get closed(): boolean {
    return (this.#flags & CLOSED) !== 0;
  }

  #key: string | undefined;
  #dialect: Dialect | undefined;
  // `initialized` and `closed` as bits of one field: one slot less per session.
  #flags = 0;
  #logLevel: LogLevel | undefined;
  #owner: string | undefined;
  #lastActivity: number = Date.now();
  #assigns: { value: Record<string, unknown> } | undefined;
  #clientInfo: Partial<Implementation> = EMPTY;
  #clientCapabilities: ClientCapabilities = EMPTY;
  // Made on first use: most sessions never subscribe, and an idle one holds no requests.
  #subscriptions: Set<string> | undefined;
  #inflight: Map<RequestId, Cancellation> | undefined;
  // The request in flight when there is one, kept apart from the map: a
  // session mostly has one at a time, and a Map's table is reallocated each
  // time it empties and refills. An id is in one of the two at most.
  #soleId: RequestId | undefined;
  #sole: Cancellation | undefined;
  #pending: Map<RequestId, PendingRequest> | undefined;
  #nextId = 0;
  #idPrefix: string | undefined;

  /**
   * Creates the instance.
   *
   * @param options The transport's options.
   */
  constructor(options: SessionOptions) {
    this.id = options.id;
    this.transport = options.transport;
    this.onMessage = options.onMessage;
    this.#onRetain = options.onRetain;
    this.#maxPending = options.maxPendingRequests;
  }

  /**
   * The `initialize` request was accepted: the session speaks `dialect` with
   * a client that says who it is and what it can do (both copied and
   * deep-frozen). The server's `init` hook runs after; if it rejects, see
   * {@link failHandshake}.
   *
   * @param dialect The negotiated dialect.
   * @param clientInfo The client's `clientInfo`.
   * @param clientCapabilities The client's `capabilities`.
   *
   * @example
   * ```ts
   * import { Session } from "@anubis/core/engine";
   * import { v2025_11_25 } from "@anubis/dialects";
   * import assert from "node:assert/strict";
   * const session = new Session({ transport: "stdio" });
   * session.completeHandshake(v2025_11_25, { name: "inspector" }, { sampling: {} });
   * assert.equal(session.dialect?.version, "2025-11-25");
   * assert.equal(session.clientInfo.name, "inspector");
   * assert.equal(session.initialized, false); // until notifications/initialized
   * ```
   */
  completeHandshake(
    dialect: Dialect,
    clientInfo: Partial<Implementation>,
    clientCapabilities: ClientCapabilities,
  ): void {
    this.#dialect = dialect;
    this.#clientInfo = frozenCopy(clientInfo);
    this.#clientCapabilities = frozenCopy(clientCapabilities);
  }

  /**
   * The handshake was refused after all (by the `init` hook or a
   * middleware): the session has no dialect again, and the transport drops it.
   *
   * @example
   * ```ts
   * import { Session } from "@anubis/core/engine";
   * import { v2025_11_25 } from "@anubis/dialects";
   * import assert from "node:assert/strict";
   * const session = new Session({ transport: "stdio" });
   * session.completeHandshake(v2025_11_25, {}, {});
   * session.failHandshake();
   * assert.equal(session.dialect, undefined);
   * ```
   */
  failHandshake(): void {
    this.#dialect = undefined;
  }

  /**
   * The client sent `notifications/initialized`.
   *
   * @example
   * ```ts
   * import { Session } from "@anubis/core/engine";
   * import assert from "node:assert/strict";
   * const session = new Session({ transport: "stdio" });
   * session.markInitialized();
   * assert.equal(session.initialized, true);
   * ```
   */
  markInitialized(): void {
    this.#flags |= INITIALIZED;
  }

  /**
   * Takes the state of a stored session (another instance made it, or this
   * one before a restart) under `dialect`, the served dialect of its version.
   *
   * @param dialect The dialect of `record.protocolVersion`.
   * @param record The stored record.
   *
   * @example
   * ```ts
   * import type { SessionRecord } from "@anubis/core";
   * import { Session } from "@anubis/core/engine";
   * import { v2025_11_25 } from "@anubis/dialects";
   * import assert from "node:assert/strict";
   * const record: SessionRecord = {
   *   v: 1,
   *   id: "b4f1",
   *   protocolVersion: "2025-11-25",
   *   clientInfo: { name: "inspector", version: "1.0.0" },
   *   clientCapabilities: {},
   *   initialized: true,
   *   subscriptions: ["notes://1"],
   *   logLevel: "info",
   *   assigns: { userId: 7 },
   *   updatedAt: Date.now(),
   * };
   * const session = new Session({ id: "b4f1", transport: "http" });
   * session.restore(v2025_11_25, record);
   * assert.equal(session.initialized, true);
   * assert.equal(session.isSubscribed("notes://1"), true);
   * assert.deepEqual(session.assigns.value, { userId: 7 });
   * ```
   */
  restore(dialect: Dialect, record: SessionRecord): void {
    this.completeHandshake(dialect, record.clientInfo, record.clientCapabilities);
    this.#flags = record.initialized ? this.#flags | INITIALIZED : this.#flags & ~INITIALIZED;
    this.#logLevel = record.logLevel;
    this.#owner = record.owner;
    for (const uri of record.subscriptions) this.#subscribe(uri);
    this.assigns.value = { ...record.assigns };
  }

  /**
   * Takes what the client may change at any instance serving the session,
   * as another instance stored it: the subscriptions and the log level.
   *
   * @param record The stored record.
   *
   * @example
   * ```ts
   * import type { SessionRecord } from "@anubis/core";
   * import { Session } from "@anubis/core/engine";
   * import assert from "node:assert/strict";
   * const session = new Session({ id: "b4f1", transport: "http" });
   * session.subscribe("notes://1");
   * const stored = { subscriptions: ["notes://2"], logLevel: "debug" } as SessionRecord;
   * session.sync(stored);
   * assert.deepEqual(session.subscribedUris(), ["notes://2"]);
   * assert.equal(session.logLevel, "debug");
   * ```
   */
  sync(record: SessionRecord): void {
    this.#subscriptions?.clear();
    for (const uri of record.subscriptions) this.#subscribe(uri);
    this.#logLevel = record.logLevel;
  }

  /**
   * The session-expired hook supplied the client's identity (copied and
   * deep-frozen).
   *
   * @param clientInfo The client's identity.
   *
   * @example
   * ```ts
   * import { Session } from "@anubis/core/engine";
   * import assert from "node:assert/strict";
   * const session = new Session({ transport: "http" });
   * session.identify({ name: "inspector" });
   * assert.equal(session.clientInfo.name, "inspector");
   * ```
   */
  identify(clientInfo: Partial<Implementation>): void {
    this.#clientInfo = frozenCopy(clientInfo);
  }

  /**
   * The client set the log level (`logging/setLevel`).
   *
   * @param level The level.
   *
   * @example
   * ```ts
   * import { Session } from "@anubis/core/engine";
   * import assert from "node:assert/strict";
   * const session = new Session({ transport: "stdio" });
   * session.setLogLevel("error");
   * assert.equal(session.logLevel, "error");
   * ```
   */
  setLogLevel(level: LogLevel): void {
    this.#logLevel = level;
  }

  /**
   * Binds the session to a principal (see {@link owner}).
   *
   * @param principal The principal (`""`: a caller without one).
   *
   * @example
   * ```ts
   * import { Session } from "@anubis/core/engine";
   * import assert from "node:assert/strict";
   * const session = new Session({ id: "b4f1", transport: "http" });
   * session.bindOwner("ada");
   * assert.equal(session.owner, "ada");
   * ```
   */
  bindOwner(principal: string): void {
    this.#owner = principal;
  }

  /**
   * The client subscribed to a resource (unless the session's `onRetain`
   * refuses the URI: its error is thrown, and nothing is kept).
   *
   * @param uri The resource URI.
   * @throws The error `onRetain` returned.
   *
   * @example
   * ```ts
   * import { Session } from "@anubis/core/engine";
   * import assert from "node:assert/strict";
   * const session = new Session({ transport: "stdio" });
   * session.subscribe("file:///notes/1");
   * assert.equal(session.isSubscribed("file:///notes/1"), true);
   * const bounded = new Session({
   *   transport: "http",
   *   onRetain: (_session, uri, kept) => kept && uri.length > 20 ? new Error("too long") : undefined,
   * });
   * assert.throws(() => bounded.subscribe(`file:///${"x".repeat(20)}`), { message: "too long" });
   * assert.equal(bounded.subscriptions.size, 0);
   * ```
   */
  subscribe(uri: string): void {
    if (this.#subscriptions?.has(uri)) return;
    const refused = this.#onRetain?.(this, uri, true);
    if (refused) throw refused;
    this.#subscribe(uri);
  }

  #subscribe(uri: string): void {
    (this.#subscriptions ??= new Set()).add(uri);
  }

  /**
   * The client unsubscribed from a resource.
   *
   * @param uri The resource URI.
   *
   * @example
   * ```ts
   * import { Session } from "@anubis/core/engine";
   * import assert from "node:assert/strict";
   * const session = new Session({ transport: "stdio" });
   * session.subscribe("file:///notes/1");
   * session.unsubscribe("file:///notes/1");
   * assert.equal(session.isSubscribed("file:///notes/1"), false);
   * ```
   */
  unsubscribe(uri: string): void {
    if (this.#subscriptions?.delete(uri)) this.#onRetain?.(this, uri, false);
  }

  /**
   * The session was active (a message arrived, or a stream held it open).
   *
   * @param at When (default: now).
   * @returns `at`.
   *
   * @example
   * ```ts
   * import { Session } from "@anubis/core/engine";
   * import assert from "node:assert/strict";
   * const session = new Session({ transport: "stdio" });
   * session.touch(0); // idle since the epoch
   * assert.equal(session.lastActivity, 0);
   * ```
   */
  touch(at: number = Date.now()): number {
    return this.#lastActivity = at;
  }

  /**
   * Whether `id` is the id of a server-to-client request that another
   * session object sent (`anubis-<hex>-<n>` with a prefix other than this
   * one's): an answer to it belongs to the instance that asked.
   *
   * @param id An answer's id.
   * @returns True for another session object's request id.
   *
   * @example
   * ```ts
   * import { Session } from "@anubis/core/engine";
   * import assert from "node:assert/strict";
   * const session = new Session({ transport: "stdio" });
   * const emit = () => Promise.resolve();
   * const asked = session.request("roots/list", {}, emit, new AbortController().signal, 5_000);
   * assert.equal(session.askedElsewhere("anubis-0123456789abcdef-1"), true);
   * assert.equal(session.askedElsewhere(7), false); // no server issued it
   * session.close();
   * await asked.catch(() => {});
   * ```
   */
  askedElsewhere(id: unknown): boolean {
    return typeof id === "string" && id.startsWith(REQUEST_ID_HEAD) &&
      (this.#idPrefix === undefined || !id.startsWith(this.#idPrefix));
  }

  /**
   * The number of requests being served.
   *
   * @example
   * ```ts
   * import { Session } from "@anubis/core/engine";
   * import assert from "node:assert/strict";
   * const session = new Session({ transport: "stdio" });
   * const cancellation = session.track(1);
   * assert.equal(session.inflightCount, 1);
   * session.untrack(1, cancellation);
   * assert.equal(session.inflightCount, 0);
   * ```
   */
  get inflightCount(): number {
    return (this.#sole === undefined ? 0 : 1) + (this.#inflight?.size ?? 0);
  }

  /**
   * Registers an in-flight request so `notifications/cancelled` can abort it.
   *
   * @param id The request id.
   * @param cancellation The request's cancellation (default: a new one that keeps cancel reasons).
   * @returns The cancellation whose signal the handler sees.
   *
   * @example
   * ```ts
   * import { Session } from "@anubis/core/engine";
   * import assert from "node:assert/strict";
   * const session = new Session({ transport: "stdio" });
   * const cancellation = session.track("req-1");
   * session.cancel("req-1", "user pressed stop");
   * assert.equal(cancellation.signal.reason, "user pressed stop");
   * session.untrack("req-1", cancellation);
   * ```
   */
  track(id: RequestId, cancellation: Cancellation = new Cancellation(KEEP_REASONS)): Cancellation {
    if (this.#sole !== undefined ? this.#soleId === id : !this.#inflight?.has(id)) {
      this.#soleId = id;
      this.#sole = cancellation;
    } else {
      (this.#inflight ??= new Map<RequestId, Cancellation>()).set(id, cancellation);
    }
    return cancellation;
  }

  /**
   * Forgets a finished request.
   *
   * @param id The request id.
   * @param cancellation The cancellation `track` returned.
   *
   * @example
   * ```ts
   * import { Session } from "@anubis/core/engine";
   * import assert from "node:assert/strict";
   * const session = new Session({ transport: "stdio" });
   * const cancellation = session.track(1);
   * session.untrack(1, cancellation);
   * session.cancel(1); // no longer tracked: ignored
   * assert.equal(cancellation.aborted, false);
   * assert.equal(session.inflightCount, 0);
   * ```
   */
  untrack(id: RequestId, cancellation: Cancellation): void {
    if (this.#sole === cancellation && this.#soleId === id) {
      this.#sole = this.#soleId = undefined;
    } else if (this.#inflight?.get(id) === cancellation) this.#inflight.delete(id);
  }

  /**
   * Cancels an in-flight request; unknown ids are ignored.
   *
   * @param id The request id.
   * @param reason Why.
   *
   * @example
   * ```ts
   * import { Session } from "@anubis/core/engine";
   * import assert from "node:assert/strict";
   * const session = new Session({ transport: "stdio" });
   * const cancellation = session.track(1);
   * session.cancel(2); // unknown: ignored
   * assert.equal(cancellation.aborted, false);
   * session.cancel(1);
   * assert.equal(cancellation.aborted, true);
   * assert.equal(cancellation.signal.reason, "cancelled");
   * session.untrack(1, cancellation);
   * ```
   */
  cancel(id: RequestId, reason?: string): void {
    const cancellation = this.#sole !== undefined && this.#soleId === id
      ? this.#sole
      : this.#inflight?.get(id);
    cancellation?.cancel(reason ?? "cancelled");
  }

  /**
   * Sends a server-to-client request and waits for the client's answer. Its
   * id is `anubis-<random prefix>-<n>`, the prefix drawn once per session
   * object, so ids are unique across the instances serving one session.
   *
   * @param method The method.
   * @param params The params.
   * @param emit Writes the request on the stream of the request that caused it.
   * @param signal Aborts the wait (the client is told with `notifications/cancelled`).
   * @param timeoutMs How long to wait.
   * @returns The client's result, validated against the dialect's schema.
   * @throws (rejects) With -32603 when `maxPendingRequests` requests already
   *   wait for the client: nothing is sent.
   *
   * @example
   * ```ts
   * import { type JsonRpcRequest } from "@anubis/core";
   * import { type JsonRpcMessage, Session } from "@anubis/core/engine";
   * import assert from "node:assert/strict";
   * const session = new Session({ transport: "stdio", maxPendingRequests: 1 });
   * const sent: JsonRpcMessage[] = [];
   * const emit = (message: JsonRpcMessage) => Promise.resolve(void sent.push(message));
   * const signal = new AbortController().signal;
   * const asked = session.request("roots/list", {}, emit, signal, 5_000);
   * await assert.rejects(session.request("roots/list", {}, emit, signal, 5_000), {
   *   message: "Too many requests waiting for the client's answer: at most 1 at once",
   * });
   * assert.equal(sent.length, 1);
   * const { id } = sent[0] as JsonRpcRequest;
   * session.resolve({ jsonrpc: "2.0", id, result: { roots: [] } });
   * assert.deepEqual(await asked, { roots: [] });
   * ```
   */
  request(
    method: string,
    params: Record<string, unknown>,
    emit: (message: JsonRpcMessage) => Promise<void>,
    signal: AbortSignal,
    timeoutMs: number,
  ): Promise<unknown> {
    if (this.#flags & CLOSED) {
      return Promise.reject(new McpError(ErrorCode.INTERNAL_ERROR, "Session closed"));
    }
    const maxPending = this.#maxPending ?? MAX_PENDING_REQUESTS;
    if (this.#pending !== undefined && this.#pending.size >= maxPending) {
      return Promise.reject(
        new McpError(
          ErrorCode.INTERNAL_ERROR,
          `Too many requests waiting for the client's answer: at most ${maxPending} at once`,
        ),
      );
    }
    // A random prefix per session object: two instances serving one session
    // (each counting from 1) never issue the same id.
    this.#idPrefix ??= `${REQUEST_ID_HEAD}${randomHex(8)}-`;
    const id = `${this.#idPrefix}${++this.#nextId}`;
    return new Promise((resolve, reject) => {
      const finish = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
        this.#pending?.delete(id);
      };
      const abandon = (reason: string, error: McpError) => {
        finish();
        emit({
          jsonrpc: "2.0",
          method: "notifications/cancelled",
          params: { requestId: id, reason },
        })
          .catch(() => {});
        reject(error);
      };
      const onAbort = () =>
        abandon(
          "The request that asked was cancelled",
          new McpError(ErrorCode.INTERNAL_ERROR, "Cancelled"),
        );
      const timer = setTimeout(
        () =>
          abandon(
            "timeout",
            new McpError(
              ErrorCode.INTERNAL_ERROR,
              `${method} got no answer within ${timeoutMs} ms`,
            ),
          ),
        timeoutMs,
      );
      if (signal.aborted) return onAbort();
      signal.addEventListener("abort", onAbort, { once: true });
      (this.#pending ??= new Map<RequestId, PendingRequest>()).set(id, {
        method,
        resolve: (result) => (finish(), resolve(result)),
        reject: (error) => (finish(), reject(error)),
      });
      emit({ jsonrpc: "2.0", id, method, params }).catch((error) =>
        this.#pending?.get(id)?.reject(McpError.from(error))
      );
    });
  }

  /**
   * Delivers a client's response to the server-to-client request it answers.
   *
   * @param response The response.
   * @returns `false` when no pending request has that id.
   *
   * @example
   * ```ts
   * import { type JsonRpcRequest } from "@anubis/core";
   * import { type JsonRpcMessage, Session } from "@anubis/core/engine";
   * import assert from "node:assert/strict";
   * const session = new Session({ transport: "stdio" });
   * const sent: JsonRpcRequest[] = [];
   * const emit = (message: JsonRpcMessage) => {
   *   sent.push(message as JsonRpcRequest);
   *   return Promise.resolve();
   * };
   * const asked = session.request("roots/list", {}, emit, new AbortController().signal, 5_000);
   * assert.equal(session.resolve({ jsonrpc: "2.0", id: "unknown", result: {} }), false);
   * const { id } = sent[0];
   * assert.equal(session.resolve({ jsonrpc: "2.0", id, error: { code: -1, message: "Rejected" } }), true);
   * await assert.rejects(asked, { message: "Rejected" });
   * ```
   */
  resolve(response: JsonRpcResultResponse | JsonRpcErrorResponse): boolean {
    const pending = response.id === null ? undefined : this.#pending?.get(response.id);
    if (!pending) return false;
    if ("error" in response) {
      pending.reject(
        new McpError(response.error.code, response.error.message, response.error.data),
      );
      return true;
    }
    const schema = this.#dialect?.requestResultSchema(pending.method);
    const checked = schema ? s.validate(schema, response.result) : undefined;
    if (checked && !checked.ok) {
      pending.reject(
        new McpError(
          ErrorCode.INVALID_PARAMS,
          `Invalid ${pending.method} result from the client: ${s.formatIssues(checked.issues)}`,
        ),
      );
    } else {
      pending.resolve(response.result);
    }
    return true;
  }

  /**
   * Cancels everything in flight and fails every pending request.
   *
   * @example
   * ```ts
   * import { Session } from "@anubis/core/engine";
   * import assert from "node:assert/strict";
   * const session = new Session({ transport: "stdio" });
   * const cancellation = session.track(1);
   * const emit = () => Promise.resolve();
   * const asked = session.request("roots/list", {}, emit, new AbortController().signal, 5_000);
   * session.close();
   * assert.equal(cancellation.signal.reason, "session closed");
   * await assert.rejects(asked, { message: "Session closed" });
   * ```
   */
  close(): void {
    this.#flags |= CLOSED;
    const inflight = this.#inflight, pending = this.#pending, sole = this.#sole;
    this.#inflight =
      this.#pending =
      this.#sole =
      this.#soleId =
        undefined;
    sole?.cancel("session closed");
    for (const cancellation of inflight?.values() ?? []) cancellation.cancel("session closed");
    for (const request of pending?.values() ?? []) {
      request.reject(new McpError(ErrorCode.INTERNAL_ERROR, "Session closed"));
    }
  }
}
