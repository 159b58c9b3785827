/**
 * The dispatch engine: serves a defined server in both eras, for any
 * transport. A transport hands it decoded messages with an {@link Exchange}
 * and writes back the {@link Reply} and whatever the exchange's `emit`
 * receives.
 *
 * @module
 */

import { principalOf } from "./auth_info.ts";
import { isThenable } from "./awaitable.ts";
import { type Dialect, INPUT_REQUIRED_METHODS } from "./dialect.ts";
import { admit, dispatch, type Routing } from "./_methods/dispatch.ts";
import { ErrorCode, McpError } from "./errors.ts";
import { emitter, type Exchange } from "./exchange.ts";
import { Cancellation } from "./cancellation.ts";
import { type Frame, InputCollector } from "./frame.ts";
import { initialize, NEVER, restore } from "./legacy/_handshake.ts";
import { firstRound, type InputRound, takeAnswers, withInputs } from "./stateless/_input_rounds.ts";
import {
  errorResponse,
  type JsonRpcMessage,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
  resultResponse,
} from "./json_rpc.ts";
import { legacyFrame, type LegacyFrameOptions } from "./legacy/_frame.ts";
import { logger } from "./logger.ts";
import { MetaKey } from "./meta.ts";
import {
  composeMiddleware,
  type MiddlewareChain,
  reportSessionEnd,
  type SessionEnd,
  sessionEndWatchers,
} from "./middleware.ts";
import { type Registry, statelessMeta } from "./registry.ts";
import { encodeContext, EnvelopeError, errorReply, NoReply, type Reply } from "./reply.ts";
import * as s from "./schema.ts";
import type { Awaitable } from "./awaitable.ts";
import type { McpServer, ServerDefinition } from "./server.ts";
import { Session, type SessionOptions } from "./legacy/session.ts";
import { servedVersions } from "./_served_versions.ts";
import { sessionRecord } from "./legacy/session_persistence.ts";
import { statelessFrame, type StatelessFrameOptions } from "./stateless/_frame.ts";
import type { SessionRecord } from "./session_store.ts";
import { type SubscriptionFilter, SubscriptionHub } from "./_subscriptions.ts";
import { MemoryTaskStore } from "./memory_task_store.ts";
import type { TaskStore } from "./task_store.ts";
import { TaskExtension, type TaskStarter } from "./stateless/_task_extension.ts";
import { TaskRuntime } from "./_task_runtime.ts";
import type { Era, Implementation } from "./types.ts";

/**
 * Options of an {@link Engine}.
 *
 * @example
 * ```ts
 * import { type EngineOptions, Registry } from "@anubis/core/engine";
 * const options: EngineOptions = { registry: new Registry(), maxSubscriptions: 256 };
 * ```
 */
export interface EngineOptions {
  /** The dialects to serve (`createDefaultRegistry()` of `@anubis/dialects`). */
  registry: Registry;
  /** The most `subscriptions/listen` streams open at once (default 1024). */
  maxSubscriptions?: number;
  /**
   * Where tasks are kept when the server has task-capable tools (default: a
   * `MemoryTaskStore` of this engine's own).
   */
  taskStore?: TaskStore;
}

/**
 * Serves one {@link McpServer} for every connection of a process. Create one
 * per transport (they share the server's notifier).
 *
 * @example
 * ```ts
 * import { defineServer } from "@anubis/core";
 * import { Engine, Registry } from "@anubis/core/engine";
 * import assert from "node:assert/strict";
 * const server = defineServer({ name: "s", version: "1.0.0" });
 * const engine = new Engine(server, { registry: new Registry() });
 * assert.deepEqual(engine.supportedVersions(), []);
 * engine.close();
 * ```
 */
export class Engine {
  /**
   * The server served.
   *
   * @example
   * ```ts
   * import { defineServer } from "@anubis/core";
   * import { Engine, Registry } from "@anubis/core/engine";
   * import assert from "node:assert/strict";
   * const server = defineServer({ name: "notes", version: "1.0.0" });
   * const engine = new Engine(server, { registry: new Registry() });
   * assert.equal(engine.server === server, true);
   * assert.equal(engine.server.info.name, "notes");
   * engine.close();
   * ```
   */
  readonly server: McpServer;
  /**
   * The dialects.
   *
   * @example
   * ```ts
   * import { defineServer } from "@anubis/core";
   * import { Engine, Registry } from "@anubis/core/engine";
   * import { v2025_11_25 } from "@anubis/dialects";
   * import assert from "node:assert/strict";
   * const registry = new Registry([v2025_11_25]);
   * const engine = new Engine(defineServer({ name: "s", version: "1.0.0" }), { registry });
   * assert.deepEqual(engine.registry.versions(), [ "2025-11-25" ]);
   * engine.close();
   * ```
   */
  readonly registry: Registry;
  readonly #hub: SubscriptionHub;
  readonly #closing = new AbortController();
  readonly #versions: string[];
  // The server's middleware, composed; `undefined` (skipped) when it has none.
  readonly #middleware: MiddlewareChain | undefined;
  // The middleware's `sessionEnded` callbacks; `undefined` when none has one.
  readonly #sessionEnded: ((end: SessionEnd) => void)[] | undefined;
  // The newest stateless version's `_meta` schema, resolved on first use (`null`: none):
  // the envelope schema of a request whose claimed version is not a stateless one.
  #metaSchema: s.Schema | null | undefined;
  // The tasks, when the server has task-capable tools (the legacy ones, and the extension's).
  readonly #tasks: TaskRuntime | undefined;
  readonly #taskExtension: TaskExtension | undefined;

  /**
   * Creates an engine for a server.
   *
   * @param server The defined server.
   * @param options The registry and limits.
   * @throws {TypeError} When the server's `supportedProtocolVersions` names a
   * version the registry does not know, or none.
   */
  constructor(server: McpServer, options: EngineOptions) {
    this.server = server;
    this.registry = options.registry;
    this.#versions = servedVersions(
      this.registry.versions(),
      server.definition.supportedProtocolVersions,
    );
    this.#middleware = composeMiddleware(server.definition.middleware);
    this.#sessionEnded = sessionEndWatchers(server.definition.middleware);
    this.#hub = new SubscriptionHub(
      server.notify,
      server.capabilities,
      options.maxSubscriptions ?? 1024,
    );
    if (server.capabilities.tasks) {
      this.#tasks = new TaskRuntime(this, options.taskStore ?? new MemoryTaskStore());
      this.#taskExtension = new TaskExtension(
        this.#tasks,
        (taskId, task) => this.#hub.deliverTask(taskId, task),
      );
    }
  }

  /**
   * The versions served, newest first: the list `server/discover` and `-32022` name.
   *
   * @example
   * ```ts
   * import { defineServer } from "@anubis/core";
   * import { Engine, Registry } from "@anubis/core/engine";
   * import { v2025_06_18, v2025_11_25 } from "@anubis/dialects";
   * import assert from "node:assert/strict";
   * const registry = new Registry([
   *   v2025_06_18,
   *   v2025_11_25,
   * ]);
   * const all = new Engine(defineServer({ name: "s", version: "1.0.0" }), { registry });
   * assert.deepEqual(all.supportedVersions(), [ "2025-11-25", "2025-06-18" ]);
   * const server = defineServer({
   *   name: "s",
   *   version: "1.0.0",
   *   supportedProtocolVersions: ["2025-06-18"],
   * });
   * const one = new Engine(server, { registry });
   * assert.deepEqual(one.supportedVersions(), [ "2025-06-18" ]);
   * all.close();
   * one.close();
   * ```
   */
  supportedVersions(): string[] {
    return [...this.#versions];
  }

  /**
   * The dialect of a served version, or `undefined`.
   *
   * @param version The version string.
   * @param era Only of this era.
   *
   * @example
   * ```ts
   * import { defineServer } from "@anubis/core";
   * import { Engine, Registry } from "@anubis/core/engine";
   * import { v2025_06_18, v2025_11_25 } from "@anubis/dialects";
   * import assert from "node:assert/strict";
   * const registry = new Registry([
   *   v2025_06_18,
   *   v2025_11_25,
   * ]);
   * const server = defineServer({
   *   name: "s",
   *   version: "1.0.0",
   *   supportedProtocolVersions: ["2025-11-25"],
   * });
   * const engine = new Engine(server, { registry });
   * assert.equal(engine.dialect("2025-11-25")?.version, "2025-11-25");
   * assert.equal(engine.dialect("2025-06-18"), undefined); // known, but not served
   * assert.equal(engine.dialect("2025-11-25", "stateless"), undefined);
   * engine.close();
   * ```
   */
  dialect(version: unknown, era?: Era): Dialect | undefined {
    const dialect = this.registry.get(version);
    if (!dialect || !this.#versions.includes(dialect.version)) return undefined;
    return era && dialect.era !== era ? undefined : dialect;
  }

  /**
   * The live legacy sessions created by {@link createSession}.
   *
   * @example
   * ```ts
   * import { defineServer } from "@anubis/core";
   * import { Engine, Registry } from "@anubis/core/engine";
   * import assert from "node:assert/strict";
   * const server = defineServer({ name: "s", version: "1.0.0" });
   * const engine = new Engine(server, { registry: new Registry() });
   * const session = engine.createSession({ transport: "stdio" });
   * assert.equal(engine.sessions.size, 1);
   * assert.equal(engine.sessions.has(session), true);
   * engine.dropSession(session);
   * assert.equal(engine.sessions.size, 0);
   * engine.close();
   * ```
   */
  get sessions(): ReadonlySet<Session> {
    return this.#hub.sessions;
  }

  /**
   * The number of open `subscriptions/listen` streams.
   *
   * @example
   * ```ts
   * import { defineServer } from "@anubis/core";
   * import { Engine, Registry } from "@anubis/core/engine";
   * import assert from "node:assert/strict";
   * const server = defineServer({ name: "s", version: "1.0.0" });
   * const engine = new Engine(server, { registry: new Registry() });
   * assert.equal(engine.listenerCount, 0);
   * engine.close();
   * ```
   */
  get listenerCount(): number {
    return this.#hub.listenerCount;
  }

  /**
   * Creates a legacy session (uninitialized until `initialize`).
   *
   * @param options Id, transport kind and the unrelated-message sink.
   * @returns The session.
   *
   * @example
   * ```ts
   * import { defineServer } from "@anubis/core";
   * import { Engine, Registry } from "@anubis/core/engine";
   * import assert from "node:assert/strict";
   * const server = defineServer({ name: "s", version: "1.0.0" });
   * const engine = new Engine(server, { registry: new Registry() });
   * const session = engine.createSession({
   *   id: crypto.randomUUID(),
   *   transport: "http",
   *   onMessage: () => {}, // the standalone SSE stream, say
   * });
   * assert.equal(session.initialized, false);
   * assert.equal(session.dialect, undefined);
   * engine.dropSession(session);
   * engine.close();
   * ```
   */
  createSession(options: SessionOptions): Session {
    const session = new Session(options);
    this.#hub.sessions.add(session);
    return session;
  }

  /**
   * Closes a session and forgets it, and releases its tasks (those this
   * instance runs are cancelled, and every one leaves the task store) unless
   * `keepTasks` says the session lives on elsewhere (a shutdown, or an
   * expiry here while a shared session store keeps it).
   *
   * @param session The session.
   * @param keepTasks Leave its tasks alone.
   *
   * @example
   * ```ts
   * import { defineServer } from "@anubis/core";
   * import { Engine, Registry } from "@anubis/core/engine";
   * import assert from "node:assert/strict";
   * const server = defineServer({ name: "s", version: "1.0.0" });
   * const engine = new Engine(server, { registry: new Registry() });
   * const session = engine.createSession({ id: "b4f1", transport: "http" });
   * engine.dropSession(session); // the client sent DELETE, or the session expired
   * assert.equal(session.closed, true);
   * assert.equal(engine.sessions.has(session), false);
   * engine.close();
   * ```
   */
  dropSession(session: Session, keepTasks = false): void {
    const ended = !session.closed && session.dialect !== undefined;
    session.close();
    this.#hub.sessions.delete(session);
    if (this.#tasks && !keepTasks && session.dialect?.supportsFeature("tasks")) {
      this.#tasks.releaseSession(session).catch((error) =>
        logger.warn("store.failed", `the tasks of session ${session.key} were not released`, {
          sessionId: session.id,
          error,
        })
      );
    }
    if (ended && this.#sessionEnded) reportSessionEnd(this.#sessionEnded, session);
  }

  /**
   * Validates the `_meta` envelope of a stateless request (digest §2.4 step
   * 4), so a transport can run its header checks in the spec's order.
   *
   * @param request A request that claims the stateless era.
   * @returns The `-32602` error, or `undefined` when the envelope is valid.
   *
   * @example
   * ```ts
   * import { defineServer } from "@anubis/core";
   * import { Engine, MetaKey, Registry } from "@anubis/core/engine";
   * import { v2026_07_28 } from "@anubis/dialects";
   * import assert from "node:assert/strict";
   * const server = defineServer({ name: "s", version: "1.0.0" });
   * const engine = new Engine(server, { registry: new Registry([v2026_07_28]) });
   * const request = (version: unknown) => ({
   *   jsonrpc: "2.0" as const,
   *   id: 1,
   *   method: "tools/list",
   *   params: { _meta: { [MetaKey.protocolVersion]: version, [MetaKey.clientCapabilities]: {} } },
   * });
   * assert.equal(engine.validateEnvelope(request("2026-07-28")), undefined);
   * assert.equal(engine.validateEnvelope(request(20260728))?.code, -32602);
   * engine.close();
   * ```
   */
  validateEnvelope(request: JsonRpcRequest | JsonRpcNotification): McpError | undefined {
    const meta = request.params?._meta;
    return this.#checkEnvelope(
      meta,
      this.registry.get((meta as Record<string, unknown> | undefined)?.[MetaKey.protocolVersion]),
    );
  }

  /** {@link validateEnvelope} with the claimed version's dialect already looked up. */
  #checkEnvelope(meta: unknown, claimed: Dialect | undefined): McpError | undefined {
    // The claimed version's own envelope; the newest one's when it claims no stateless version.
    let schema = claimed?.era === "stateless" ? claimed.requestMetaSchema : undefined;
    if (!schema) {
      if (this.#metaSchema === undefined) {
        const newest = this.registry.get(this.registry.versions("stateless")[0]);
        this.#metaSchema = newest?.requestMetaSchema ?? null;
      }
      schema = this.#metaSchema ?? undefined;
    }
    if (!schema) return undefined;
    const issues = s.issuesOf(schema, meta);
    if (!issues) return undefined;
    return new EnvelopeError(
      ErrorCode.INVALID_PARAMS,
      `Invalid request _meta: ${s.formatIssues(issues)}`,
      {
        envelope: issues.map((i) => ({
          path: ["_meta", ...i.path].join("."),
          message: i.message,
        })),
      },
    );
  }

  /**
   * Handles one message. Requests get a {@link Reply} (or `undefined` when
   * cancelled or answered with `NO_REPLY`); notifications and responses get
   * `undefined`. Never throws.
   *
   * @param message The decoded message.
   * @param exchange Its surroundings.
   * @param era The transport's own decision, when it made one, so the engine
   * does not decide again: `"legacy"` for a message it found claims no
   * stateless version (`classifyEra`), or, for one whose `_meta` claims a
   * stateless version, that version's served dialect (as {@link dialect} with
   * `"stateless"` gives it), so the version is not looked up again either.
   * Absent, the engine decides.
   * @returns The reply, if any.
   *
   * @example
   * ```ts
   * import { defineServer } from "@anubis/core";
   * import { Engine, Registry } from "@anubis/core/engine";
   * import assert from "node:assert/strict";
   * const server = defineServer({ name: "s", version: "1.0.0" });
   * const engine = new Engine(server, { registry: new Registry() });
   * const exchange = { transport: "stdio", session: engine.createSession({ transport: "stdio" }) };
   * const pong = await engine.handle({ jsonrpc: "2.0", id: 1, method: "ping" }, exchange);
   * assert.deepEqual(pong, { message: { jsonrpc: "2.0", id: 1, result: {} }, status: 200 });
   * const early = await engine.handle({ jsonrpc: "2.0", id: 2, method: "tools/list" }, exchange);
   * assert.deepEqual(early?.message, {
   *   jsonrpc: "2.0",
   *   id: 2,
   *   error: { code: -32600, message: "Server not initialized" },
   * });
   * const note = await engine.handle({ jsonrpc: "2.0", method: "notifications/initialized" }, exchange);
   * assert.equal(note, undefined); // notifications get no reply
   * engine.close();
   * ```
   */
  handle(
    message: JsonRpcMessage,
    exchange: Exchange,
    era?: Dialect | "legacy",
  ): Promise<Reply | undefined> {
    const reply = this.handleNow(message, exchange, era);
    return isThenable(reply) ? reply : Promise.resolve(reply);
  }

  /**
   * {@link handle}, but a request served at once is answered at once: the
   * reply itself, not a promise of it, so a transport that serves messages
   * one after another (stdio) can queue every answer of a read before its
   * next read, and makes no promise per message. A request whose serving
   * waits, a notification and a response give a promise, as from `handle`.
   * Never throws.
   *
   * @param message The decoded message.
   * @param exchange Its surroundings.
   * @param era As for {@link handle}.
   * @returns The reply (or `undefined`), or a promise of it.
   *
   * @example
   * ```ts
   * import { defineServer } from "@anubis/core";
   * import { Engine, Registry } from "@anubis/core/engine";
   * import assert from "node:assert/strict";
   * const server = defineServer({ name: "s", version: "1.0.0" });
   * const engine = new Engine(server, { registry: new Registry() });
   * const exchange = { transport: "stdio", session: engine.createSession({ transport: "stdio" }) };
   * const pong = engine.handleNow({ jsonrpc: "2.0", id: 1, method: "ping" }, exchange);
   * assert.deepEqual(pong, { message: { jsonrpc: "2.0", id: 1, result: {} }, status: 200 });
   * const note = engine.handleNow({ jsonrpc: "2.0", method: "notifications/initialized" }, exchange);
   * assert(note instanceof Promise);
   * assert.equal(await note, undefined);
   * engine.close();
   * ```
   */
  handleNow(
    message: JsonRpcMessage,
    exchange: Exchange,
    era?: Dialect | "legacy",
  ): Awaitable<Reply | undefined> {
    if (!("method" in message) || !("id" in message)) {
      return this.#unanswered(message, exchange, era);
    }
    // Not async: a request served at once is answered without a suspended
    // frame or a promise of its own per layer.
    try {
      const mark = this.server.notify.published;
      let reply: Awaitable<Reply | undefined>;
      if (era === "legacy") {
        reply = this.#legacy(message, exchange);
      } else if (era !== undefined) {
        reply = this.#stateless(message, exchange, era.version, era);
      } else {
        // classifyEra's decision, with no claim object per message.
        const meta = statelessMeta(message);
        reply = meta
          ? this.#stateless(message, exchange, meta[MetaKey.protocolVersion])
          : this.#legacy(message, exchange);
      }
      if (isThenable(reply)) return this.#answerLater(reply, mark, message);
      // Changes raised while it ran reach the other instances' stored
      // streams before this answer leaves (nothing to wait for without a bus).
      const recorded = this.server.notify.recorded(mark);
      if (recorded === undefined) return reply;
      return recorded.then(() => reply, (error) => this.#failure(error, message));
    } catch (error) {
      return this.#failure(error, message);
    }
  }

  /** {@link handle} of a notification or a response: no reply (at once when nothing waits). */
  #unanswered(
    message: JsonRpcNotification | JsonRpcResponse,
    exchange: Exchange,
    era: Dialect | "legacy" | undefined,
  ): Promise<undefined> {
    try {
      if (!("method" in message)) {
        exchange.session?.resolve(message);
        return NO_REPLY_YET;
      }
      const stateless = era === undefined ? statelessMeta(message) !== undefined : era !== "legacy";
      const handled = this.#middleware
        ? this.#notificationThrough(message, exchange, stateless)
        : this.#notification(message, exchange, stateless);
      if (!handled) return NO_REPLY_YET;
      return handled.then(() => undefined, (error) => {
        this.#failure(error, message);
        return undefined;
      });
    } catch (error) {
      this.#failure(error, message);
      return NO_REPLY_YET;
    }
  }

  /** {@link handle} of a request whose serving is pending. */
  async #answerLater(
    pending: PromiseLike<Reply | undefined>,
    mark: number,
    message: JsonRpcRequest,
  ): Promise<Reply | undefined> {
    try {
      const reply = await pending;
      const recorded = this.server.notify.recorded(mark);
      if (recorded !== undefined) await recorded;
      return reply;
    } catch (error) {
      return this.#failure(error, message);
    }
  }

  /** Only reached on a defect in the engine itself; the client still gets an answer. */
  #failure(error: unknown, message: JsonRpcMessage): Reply | undefined {
    const method = "method" in message ? message.method : undefined;
    logger.error("engine.failed", "engine failure", { method, error });
    if (!("method" in message) || !("id" in message)) return undefined;
    return {
      message: errorResponse(message.id, ErrorCode.INTERNAL_ERROR, "Internal error"),
      status: 500,
    };
  }

  /**
   * Handles a JSON-RPC batch (2025-03-26): every request is served
   * concurrently and the responses are returned in request order.
   *
   * @param messages The batch entries.
   * @param exchange Their surroundings.
   * @returns The responses (empty when the batch held only notifications and responses).
   *
   * @example
   * ```ts
   * import { defineServer } from "@anubis/core";
   * import { Engine, Registry } from "@anubis/core/engine";
   * import assert from "node:assert/strict";
   * const server = defineServer({ name: "s", version: "1.0.0" });
   * const engine = new Engine(server, { registry: new Registry() });
   * const responses = await engine.handleBatch([
   *   { jsonrpc: "2.0", id: 1, method: "ping" },
   *   { jsonrpc: "2.0", method: "notifications/initialized" },
   *   { jsonrpc: "2.0", id: 2, method: "ping" },
   * ], { transport: "stdio" });
   * assert.deepEqual(responses.map((response) => response.id), [ 1, 2 ]);
   * engine.close();
   * ```
   */
  async handleBatch(
    messages: readonly JsonRpcMessage[],
    exchange: Exchange,
  ): Promise<JsonRpcResponse[]> {
    const replies = await Promise.all(messages.map((m) => this.handle(m, exchange)));
    return replies.flatMap((r) => (r ? [r.message] : []));
  }

  /**
   * The record a session store keeps for a session, with assigns passed
   * through the server's `serializeAssigns`.
   *
   * @param session An initialized session.
   * @returns The record.
   * @throws {TypeError} Naming the assign that is not JSON-safe.
   *
   * @example
   * ```ts
   * import { defineServer } from "@anubis/core";
   * import { Engine, Registry } from "@anubis/core/engine";
   * import { v2025_11_25 } from "@anubis/dialects";
   * import assert from "node:assert/strict";
   * const server = defineServer({
   *   name: "s",
   *   version: "1.0.0",
   *   serializeAssigns: (assigns) => ({ userId: Number(assigns.userId) }), // drops the live handle
   * });
   * const registry = new Registry([v2025_11_25]);
   * const engine = new Engine(server, { registry });
   * const session = engine.createSession({ id: "b4f1", transport: "http" });
   * // as `initialize` does:
   * session.completeHandshake(engine.dialect("2025-11-25")!, { name: "inspector", version: "1.0.0" }, {});
   * session.assigns.value = { userId: 7, connection: new AbortController() };
   * const record = engine.snapshot(session);
   * assert.equal(record.protocolVersion, "2025-11-25");
   * assert.equal(record.clientInfo.name, "inspector");
   * assert.deepEqual(record.assigns, { userId: 7 });
   * engine.close();
   * ```
   */
  snapshot(session: Session): SessionRecord {
    return sessionRecord(session, this.server.definition.serializeAssigns);
  }

  /**
   * Restores a session from a store record. `handleSessionExpired` decides
   * (and may supply the client info); without it `init` runs as on a
   * handshake. A rejection drops the session and rethrows as an `McpError`.
   *
   * @param record The stored record.
   * @param options The new session's transport options (its id must match the record's).
   * @param exchange The request that asked for the session.
   * @returns The live session.
   *
   * @example
   * ```ts
   * import { defineServer } from "@anubis/core";
   * import { Engine, Registry } from "@anubis/core/engine";
   * import type { SessionRecord } from "@anubis/core";
   * import { v2025_11_25 } from "@anubis/dialects";
   * import assert from "node:assert/strict";
   * const server = defineServer({
   *   name: "s",
   *   version: "1.0.0",
   *   init: (clientInfo, frame) => void (frame.assigns.greeted = clientInfo.name),
   * });
   * const registry = new Registry([v2025_11_25]);
   * const engine = new Engine(server, { registry });
   * const record: SessionRecord = {
   *   v: 1,
   *   id: "b4f1",
   *   protocolVersion: "2025-11-25",
   *   clientInfo: { name: "inspector", version: "1.0.0" },
   *   clientCapabilities: {},
   *   initialized: true,
   *   subscriptions: ["notes://1"],
   *   assigns: { userId: 7 },
   *   updatedAt: Date.now(),
   * };
   * const session = await engine.restoreSession(record, { id: "b4f1", transport: "http" }, {
   *   transport: "http",
   * });
   * assert.deepEqual(session.assigns.value, { userId: 7, greeted: "inspector" });
   * assert.equal(session.isSubscribed("notes://1"), true);
   * assert.equal(engine.sessions.has(session), true);
   * engine.close();
   * ```
   */
  restoreSession(
    record: SessionRecord,
    options: SessionOptions,
    exchange: Exchange,
  ): Promise<Session> {
    const dialect = this.dialect(record.protocolVersion, "legacy");
    if (!dialect) {
      return Promise.reject(
        new McpError(
          ErrorCode.INTERNAL_ERROR,
          `Stored session uses unserved version ${record.protocolVersion}`,
        ),
      );
    }
    const session = this.createSession({ ...options, id: record.id });
    return restore(this.server, session, dialect, record, exchange).then(() => session, (error) => {
      this.dropSession(session);
      throw McpError.from(error);
    });
  }

  /**
   * Ends every open listen stream gracefully and stops delivering changes.
   *
   * @example
   * ```ts
   * import { defineServer } from "@anubis/core";
   * import { Engine, Registry } from "@anubis/core/engine";
   * import { v2025_11_25 } from "@anubis/dialects";
   * import assert from "node:assert/strict";
   * const server = defineServer({ name: "s", version: "1.0.0" });
   * const registry = new Registry([v2025_11_25]);
   * const engine = new Engine(server, { registry });
   * const heard: string[] = [];
   * const session = engine.createSession({
   *   transport: "stdio",
   *   onMessage: (message) => void ("method" in message && heard.push(message.method)),
   * });
   * session.completeHandshake(engine.dialect("2025-11-25")!, {}, {}); // as `initialize` does
   * session.markInitialized();
   * session.subscribe("notes://1");
   * server.notify.resourceUpdated("notes://1");
   * assert.deepEqual(heard, ["notifications/resources/updated"]);
   * engine.close();
   * server.notify.resourceUpdated("notes://1"); // this engine no longer delivers
   * assert.equal(heard.length, 1);
   * ```
   */
  close(): void {
    this.#closing.abort();
    this.#hub.close();
  }

  /** Runs a request's serving through the middleware; a request must get a result. */
  async #through(
    request: JsonRpcRequest,
    era: Era,
    exchange: Exchange,
    frame: Frame | undefined,
    serve: (request: JsonRpcRequest) => Awaitable<Record<string, unknown> | undefined>,
  ): Promise<Record<string, unknown> | undefined> {
    const { id, method } = request;
    const call = {
      method,
      params: request.params ?? {},
      id,
      era,
      transport: exchange.transport,
      frame,
    };
    let unanswered = false; // the server itself gave no result (a listen stream that broke)
    const result = await this.#middleware!(call, async (params) => {
      // A middleware's rewritten params are what the routing and the handler see.
      const served = await serve(params === call.params ? request : { ...request, params });
      unanswered = served === undefined;
      return served;
    });
    if (result === undefined && !unanswered) {
      throw new Error(`A middleware returned no result for ${method}`);
    }
    return result;
  }

  /** Serves a notification through the middleware (whose failures are logged, not answered). */
  async #notificationThrough(
    message: JsonRpcNotification,
    exchange: Exchange,
    stateless: boolean,
  ): Promise<void> {
    const { session } = exchange;
    const frame = session?.dialect
      ? legacyFrame(this.server, {
        session,
        exchange,
        method: message.method,
        request: undefined,
        cancellation: NEVER,
      })
      : undefined;
    const call = {
      method: message.method,
      params: message.params ?? {},
      era: stateless ? "stateless" as const : "legacy" as const,
      transport: exchange.transport,
      frame,
    };
    try {
      await this.#middleware!(
        call,
        async (params) =>
          void await this.#notification(
            params === call.params ? message : { ...message, params },
            exchange,
            stateless,
          ),
      );
    } catch (error) {
      logger.error("middleware.failed", `middleware of ${message.method} failed`, {
        method: message.method,
        error,
      });
    }
  }

  /** Serves `initialize` through the middleware: its reply becomes a result or an error. */
  async #initializeThrough(request: JsonRpcRequest, exchange: Exchange): Promise<Reply> {
    try {
      const result = await this.#through(request, "legacy", exchange, undefined, async (served) => {
        const { message } = await initialize(this, served, exchange);
        if ("error" in message) {
          const { code, message: text, data } = message.error;
          throw new McpError(code, text, data);
        }
        return message.result;
      });
      return { message: resultResponse(request.id, result!), status: 200 };
    } catch (error) {
      // Refused by a middleware: the session stays uninitialized, as on a rejected handshake.
      exchange.session?.failHandshake();
      return errorReply(request, error);
    }
  }

  /** Serves a notification: at once, unless the server's handler has one to wait for. */
  #notification(
    message: JsonRpcNotification,
    exchange: Exchange,
    stateless: boolean,
  ): Promise<void> | undefined {
    const session = exchange.session;
    const params = message.params ?? {};
    if (message.method === "notifications/cancelled") {
      const id = params.requestId;
      if (typeof id === "string" || typeof id === "number") {
        session?.cancel(id, typeof params.reason === "string" ? params.reason : undefined);
      }
      return;
    }
    session?.touch();
    if (message.method === "notifications/initialized") {
      if (session?.dialect) session.markInitialized();
      return;
    }
    const handler = this.server.definition.handleNotification;
    const dialect = session?.dialect;
    if (!handler || !dialect || stateless) return;
    const schema = dialect.notificationParamsSchema(message.method);
    if (!schema || !s.validate(schema, params).ok) return;
    return this.#notify(handler, message, exchange);
  }

  async #notify(
    handler: NonNullable<ServerDefinition["handleNotification"]>,
    message: JsonRpcNotification,
    exchange: Exchange,
  ): Promise<void> {
    try {
      await handler(
        message,
        legacyFrame(this.server, {
          session: exchange.session!,
          exchange,
          method: message.method,
          request: undefined,
          cancellation: NEVER,
        }),
      );
    } catch (error) {
      logger.error("notification.failed", `handleNotification(${message.method}) failed`, {
        method: message.method,
        error,
      });
    }
  }

  #legacy(request: JsonRpcRequest, exchange: Exchange): Awaitable<Reply | undefined> {
    const { session } = exchange;
    const { id, method } = request;
    session?.touch();
    if (method === "initialize") {
      return this.#middleware
        ? this.#initializeThrough(request, exchange)
        : initialize(this, request, exchange);
    }
    if (!session?.dialect) {
      if (method === "ping") return { message: resultResponse(id, {}), status: 200 };
      return errorReply(
        request,
        new McpError(ErrorCode.INVALID_REQUEST, "Server not initialized"),
      );
    }
    const dialect = session.dialect;
    if (this.#tasks) {
      const tasked = this.#tasks.legacy(
        request,
        exchange,
        session,
        (frame) =>
          this.#legacyServe(request, exchange, {
            dialect,
            frame,
            session,
            checkedMeta: undefined,
          }),
      );
      if (tasked) return tasked;
    }
    const cancellation = session.track(id);
    const call: Call & LegacyFrameOptions = {
      request,
      dialect,
      frame: undefined!, // made below, from this record
      session,
      checkedMeta: undefined,
      stateless: false,
      retry: false,
      inputs: undefined,
      hooks: undefined,
      tracking: session,
      exchange,
      cancellation,
    };
    call.frame = legacyFrame(this.server, call);
    try {
      return this.#answer(call, this.#legacyServe(request, exchange, call));
    } catch (error) {
      return this.#failed(call, error);
    }
  }

  /** Serves an initialized legacy request (through the middleware, when there is one). */
  #legacyServe(
    request: JsonRpcRequest,
    exchange: Exchange,
    routing: Routing,
  ): Awaitable<Record<string, unknown> | undefined> {
    if (!this.#middleware) return dispatch(this, request, routing);
    return this.#through(
      request,
      "legacy",
      exchange,
      routing.frame,
      (served) => dispatch(this, served, routing),
    );
  }

  #stateless(
    request: JsonRpcRequest,
    exchange: Exchange,
    version: unknown,
    resolved?: Dialect,
  ): Awaitable<Reply | undefined> {
    // Looked up once: the served dialect also names the envelope's schema.
    const dialect = resolved ?? this.dialect(version, "stateless");
    const envelope = this.#checkEnvelope(
      request.params?._meta,
      dialect ?? this.registry.get(version),
    );
    if (envelope) return errorReply(request, envelope, "stateless");
    if (!dialect) {
      return errorReply(
        request,
        new McpError(ErrorCode.UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version", {
          supported: this.supportedVersions(),
          requested: version,
        }),
        "stateless",
      );
    }
    let starter: TaskStarter | undefined;
    const tasks = this.#taskExtension;
    if (tasks && dialect.supportsFeature("tasks_extension")) {
      const served = tasks.serve(request, exchange, dialect);
      if (served) return served;
      starter = tasks.starter(request, exchange, dialect);
    }
    const params = request.params!;
    const { session } = exchange;
    const cancellation = new Cancellation({ linked: exchange.signal, lazy: exchange.lazySignal });
    session?.track(request.id, cancellation);
    const inputs = INPUT_REQUIRED_METHODS.has(request.method) ? new InputCollector() : undefined;
    const call: Call = {
      request,
      dialect,
      frame: undefined!, // made below, from this record
      session: undefined,
      checkedMeta: dialect.requestMetaSchema,
      stateless: true,
      retry: params.inputResponses !== undefined || params.requestState !== undefined,
      inputs,
      hooks: starter?.hooks,
      tracking: session,
      exchange,
      cancellation,
    };
    const frame = call.frame = statelessFrame(this.server, call);
    try {
      if (this.#middleware === undefined && starter === undefined) {
        // The common case, with no closure made per request.
        return this.#answer(call, this.#serveStateless(call, request));
      }
      const serve = (served: JsonRpcRequest) => this.#serveStateless(call, served);
      // A call that may become a task is answered with the task once it is one.
      const served = starter
        ? (rewritten: JsonRpcRequest) => starter.settle(() => serve(rewritten))
        : serve;
      return this.#answer(
        call,
        this.#middleware
          ? this.#through(request, "stateless", exchange, frame, served)
          : served(request),
      );
    } catch (error) {
      return this.#failed(call, error);
    }
  }

  /**
   * A request's answer from what serving it gave, in either era: at once when
   * that is a value, else once it settles. Ends the call either way.
   */
  #answer(
    call: Call,
    outcome: Awaitable<Record<string, unknown> | undefined>,
  ): Awaitable<Reply | undefined> {
    if (isThenable(outcome)) return this.#answerSettled(call, outcome);
    try {
      return this.#reply(call, outcome);
    } catch (error) {
      return failure(call, error);
    } finally {
      end(call);
    }
  }

  /** {@link #answer} of a pending outcome. */
  async #answerSettled(
    call: Call,
    outcome: PromiseLike<Record<string, unknown> | undefined>,
  ): Promise<Reply | undefined> {
    try {
      return this.#reply(call, await outcome);
    } catch (error) {
      return failure(call, error);
    } finally {
      end(call);
    }
  }

  /** {@link #answer} of serving that threw before it gave an outcome. */
  #failed(call: Call, error: unknown): Reply | undefined {
    try {
      return failure(call, error);
    } finally {
      end(call);
    }
  }

  /** A request's result, encoded for its dialect; no reply once the request was cancelled. */
  #reply(call: Call, result: Record<string, unknown> | undefined): Reply | undefined {
    const { request, cancellation } = call;
    if (call.stateless) {
      // No result: a listen stream that ended without a graceful close.
      if (result === undefined) return undefined;
      // An input round's answer goes out although the round cancelled the request.
      if (cancellation.aborted && result.resultType !== "input_required") return undefined;
    } else if (cancellation.aborted) {
      return undefined;
    }
    const encoded = call.dialect.encodeResult(
      request.method,
      result!,
      call.stateless
        ? encodeContext(this.server, request.method, call.frame, call.retry)
        : encodeContext(this.server),
    );
    return { message: resultResponse(request.id, encoded), status: 200 };
  }

  /**
   * Serves an admitted stateless request (`request`: the call's own, or a
   * middleware's rewrite of it): at once when nothing waits (`undefined`: a
   * listen stream that ended without a graceful close).
   */
  #serveStateless(
    call: Call,
    request: JsonRpcRequest,
  ): Awaitable<Record<string, unknown> | undefined> {
    const definition = this.server.definition;
    const { frame, inputs } = call;
    if (inputs && !definition.init && typeof request.params!.requestState !== "string") {
      // The first round without an init hook: the work starts here, with no closure of its own.
      takeAnswers(request, inputs);
      const work = dispatch(this, request, call);
      if (!isThenable(work)) return work;
      return firstRound(this.#inputRound(call, request), work);
    }
    if (inputs) {
      const work = () => dispatch(this, request, call);
      // Without an init hook the work starts at once, with no wrapper of its own.
      const run = definition.init
        ? async () => {
          await definition.init!(frame.context.clientInfo as Implementation, frame);
          return await work();
        }
        : work;
      return withInputs(this.#inputRound(call, request), run);
    }
    if (request.method === "subscriptions/listen") return this.#listen(call, request);
    if (!definition.init) return dispatch(this, request, call);
    return (async () => {
      await definition.init!(frame.context.clientInfo as Implementation, frame);
      return await dispatch(this, request, call);
    })();
  }

  /** The input rounds' view of a stateless call. */
  #inputRound(call: Call, request: JsonRpcRequest): InputRound {
    return {
      server: this.server,
      request,
      inputs: call.inputs!,
      cancellation: call.cancellation,
      principal: principalOf(call.frame.context.authInfo),
    };
  }

  /** Serves `subscriptions/listen` until its stream ends. */
  async #listen(
    call: Call,
    request: JsonRpcRequest,
  ): Promise<Record<string, unknown> | undefined> {
    const { dialect, frame } = call;
    await this.server.definition.init?.(frame.context.clientInfo as Implementation, frame);
    // Served here, not by the routing, but admitted the same way.
    const { notifications } = admit(this, request, dialect, dialect.requestMetaSchema);
    const filter = notifications as SubscriptionFilter;
    // Task notifications only for the caller's own tasks, of a server that has tasks.
    const taskIds = filter.taskIds?.length && this.#taskExtension
      ? await this.#taskExtension.listenable(request, frame.context.authInfo, filter.taskIds)
      : undefined;
    const graceful = await this.#hub.listen({
      id: request.id,
      filter,
      emit: emitter(call.exchange),
      signal: call.cancellation.signal,
      closing: this.#closing.signal,
      taskIds,
    });
    return graceful ? { _meta: { [MetaKey.subscriptionId]: request.id } } : undefined;
  }
}

/** What {@link Engine.handle} gives a message without a reply that nothing waits for. */
const NO_REPLY_YET: Promise<undefined> = Promise.resolve(undefined);

/**
 * One request on its way to its answer, in either era: what the answer needs
 * once serving it gave a result or failed, whether that was at once or later.
 */
interface Call extends Routing, StatelessFrameOptions {
  /** Made from this record once the rest of it is known. */
  frame: Frame;
  readonly request: JsonRpcRequest;
  readonly stateless: boolean;
  /** Whether the request answers an input round (stateless era). */
  readonly retry: boolean;
  /** The session tracking the request for `notifications/cancelled`, if any. */
  readonly tracking: Session | undefined;
}

/** A request's failure: no reply once cancelled or for `NO_REPLY`. */
function failure(call: Call, error: unknown): Reply | undefined {
  if (call.cancellation.aborted || error instanceof NoReply) return undefined;
  return errorReply(call.request, error, call.stateless ? "stateless" : "legacy");
}

/** Ends a call: its session stops tracking it, and its cancellation lets go of the transport. */
function end(call: Call): void {
  const { cancellation } = call;
  if (call.stateless) cancellation.dispose();
  call.tracking?.untrack(call.request.id, cancellation);
}
