/**
 * The state of one legacy-era connection or HTTP session: the negotiated
 * dialect, the client's identity and capabilities, log level, resource
 * subscriptions, assigns, in-flight requests and server-to-client requests.
 *
 * @module
 */

import { Cancellation } from "./cancellation.ts";
import type { Dialect } from "./dialect.ts";
import { ErrorCode, McpError } from "./errors.ts";
import { EMPTY } from "./frame_context.ts";
import type {
  JsonRpcErrorResponse,
  JsonRpcMessage,
  JsonRpcResultResponse,
  RequestId,
} from "./json_rpc.ts";
import * as s from "./schema.ts";
import type { ClientCapabilities, Implementation, LogLevel } from "./types.ts";

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
}

const KEEP_REASONS = { keepReasons: true };

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
 * it in on `initialize`.
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
   * const session = new Session({ transport: "stdio" });
   * const heard: string[] = [];
   * session.onMessage = (message) => void ("method" in message && heard.push(message.method));
   * const changed = { jsonrpc: "2.0" as const, method: "notifications/tools/list_changed" };
   * await session.onMessage?.(changed, session);
   * assert.deepEqual(heard, ["notifications/tools/list_changed"]);
   * ```
   */
  onMessage?: (message: JsonRpcMessage, session: Session) => void | Promise<void>;
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
  dialect?: Dialect;
  /**
   * The client's identity. Set once at `initialize` or restore; what is set
   * is copied and deep-frozen, so no handler can change what later requests
   * of the session see (a write throws a `TypeError` in strict code).
   *
   * @example
   * ```ts
   * import { Session } from "@anubis/core/engine";
   * import assert from "node:assert/strict";
   * const session = new Session({ transport: "stdio" });
   * const info = { name: "inspector", version: "1.0.0" };
   * session.clientInfo = info;
   * info.name = "changed";
   * assert.equal(session.clientInfo.name, "inspector");
   * assert.equal(Object.isFrozen(session.clientInfo), true);
   * ```
   */
  get clientInfo(): Partial<Implementation> {
    return this.#clientInfo;
  }
  /**
   * Sets the client's identity: a deep-frozen copy of `value`.
   *
   * @example
   * ```ts
   * import { Session } from "@anubis/core/engine";
   * import assert from "node:assert/strict";
   * const session = new Session({ transport: "stdio" });
   * session.clientInfo = { name: "inspector", version: "1.0.0" };
   * try {
   *   (session.clientInfo as { name: string }).name = "impostor";
   * } catch (error) {
   *   assert.equal(error instanceof TypeError, true);
   *   assert.equal(session.clientInfo.name, "inspector");
   * }
   * ```
   */
  set clientInfo(value: Partial<Implementation>) {
    this.#clientInfo = frozenCopy(value);
  }
  /**
   * The client's capabilities; copied and deep-frozen like {@link clientInfo}.
   *
   * @example
   * ```ts
   * import { Session } from "@anubis/core/engine";
   * import assert from "node:assert/strict";
   * const session = new Session({ transport: "stdio" });
   * session.clientCapabilities = { roots: { listChanged: true } };
   * assert.deepEqual(session.clientCapabilities.roots, { listChanged: true });
   * assert.equal(Object.isFrozen(session.clientCapabilities.roots), true);
   * ```
   */
  get clientCapabilities(): ClientCapabilities {
    return this.#clientCapabilities;
  }
  /**
   * Sets the client's capabilities: a deep-frozen copy of `value`.
   *
   * @example
   * ```ts
   * import { type ClientCapabilities } from "@anubis/core";
   * import { Session } from "@anubis/core/engine";
   * import assert from "node:assert/strict";
   * const session = new Session({ transport: "stdio" });
   * const declared: ClientCapabilities = { sampling: {} };
   * session.clientCapabilities = declared;
   * declared.roots = {};
   * assert.deepEqual(session.clientCapabilities, { sampling: {} });
   * ```
   */
  set clientCapabilities(value: ClientCapabilities) {
    this.#clientCapabilities = frozenCopy(value);
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
   * ```
   */
  initialized = false;
  /**
   * The level set by `logging/setLevel`.
   *
   * @example
   * ```ts
   * import { Session } from "@anubis/core/engine";
   * import assert from "node:assert/strict";
   * const session = new Session({ transport: "stdio" });
   * assert.equal(session.logLevel, undefined);
   * session.logLevel = "warning";
   * assert.equal(session.logLevel, "warning");
   * ```
   */
  logLevel?: LogLevel;
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
   * session.owner = "ada";
   * assert.equal(session.owner, "ada");
   * ```
   */
  owner?: string;
  /**
   * URIs the client subscribed to (made on first use; readers use {@link isSubscribed}).
   *
   * @example
   * ```ts
   * import { Session } from "@anubis/core/engine";
   * import assert from "node:assert/strict";
   * const session = new Session({ transport: "stdio" });
   * session.subscriptions.add("file:///notes/1");
   * assert.equal(session.subscriptions.size, 1);
   * ```
   */
  get subscriptions(): Set<string> {
    return this.#subscriptions ??= new Set();
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
   * session.subscriptions.add("file:///notes/1");
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
   * session.subscriptions.add("file:///notes/1");
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
  lastActivity: number = Date.now();
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
  closed = false;

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
   *
   * @example
   * ```ts
   * import { type JsonRpcRequest } from "@anubis/core";
   * import { type JsonRpcMessage, Session } from "@anubis/core/engine";
   * import assert from "node:assert/strict";
   * const session = new Session({ transport: "stdio" });
   * const sent: JsonRpcMessage[] = [];
   * const emit = (message: JsonRpcMessage) => Promise.resolve(void sent.push(message));
   * const asked = session.request("roots/list", {}, emit, new AbortController().signal, 5_000);
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
    if (this.closed) {
      return Promise.reject(new McpError(ErrorCode.INTERNAL_ERROR, "Session closed"));
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
    const schema = this.dialect?.requestResultSchema(pending.method);
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
    this.closed = true;
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
