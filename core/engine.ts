/**
 * The dispatch engine: serves a defined server in both eras, for any
 * transport. A transport hands it decoded messages with an {@link Exchange}
 * and writes back the {@link Reply} and whatever the exchange's `emit`
 * receives.
 *
 * @module
 */

import { CACHEABLE_METHODS, type Dialect } from "./dialect.ts";
import { ErrorCode, McpError } from "./errors.ts";
import { Frame, type FrameContext, InputCollector } from "./frame.ts";
import {
  errorResponse,
  type JsonRpcMessage,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
  resultResponse,
} from "./json_rpc.ts";
import { MetaKey } from "./meta.ts";
import { classifyEra, type Registry } from "./registry.ts";
import * as s from "./schema.ts";
import { type McpServer, NO_REPLY } from "./server.ts";
import { Session, type SessionOptions } from "./session.ts";
import { type SubscriptionFilter, SubscriptionHub } from "./subscriptions.ts";
import type { ClientCapabilities, Era, Implementation, LogLevel } from "./types.ts";
import { DEFAULT_ROUTES, REQUIRED_CAPABILITY } from "./routes.ts";
import { sessionRecord } from "./session_persistence.ts";
import { emitter, legacyFrame } from "./legacy_frame.ts";
import type { SessionRecord } from "./session_store.ts";

/**
 * Options of an {@link Engine}.
 *
 * @example
 * ```ts
 * import { type EngineOptions, Registry } from "@anubis/core";
 * const options: EngineOptions = { registry: new Registry(), maxSubscriptions: 256 };
 * ```
 */
export interface EngineOptions {
  /** The dialects to serve (`createDefaultRegistry()` of `@anubis/dialects`). */
  registry: Registry;
  /** The most `subscriptions/listen` streams open at once (default 1024). */
  maxSubscriptions?: number;
}

/**
 * One inbound message's surroundings, given by the transport.
 *
 * @example
 * ```ts
 * import type { Exchange } from "@anubis/core";
 * const exchange: Exchange = { transport: "http", headers: { "user-agent": "x" } };
 * ```
 */
export interface Exchange {
  /** The legacy session of the connection (stdio) or of the `Mcp-Session-Id` (HTTP). */
  session?: Session;
  /** The transport kind. */
  transport: string;
  /** Request headers, lowercased. */
  headers?: Record<string, string>;
  /** What a middleware attached to the request. */
  assigns?: Record<string, unknown>;
  /** Authentication facts a middleware attached. */
  authInfo?: unknown;
  /** Writes a message related to this request (progress, logs, server requests). */
  emit?: (message: JsonRpcMessage) => void | Promise<void>;
  /** Aborts when the transport's request is cancelled (stateless HTTP: the client disconnected). */
  signal?: AbortSignal;
}

/**
 * The engine's answer to a request: the response and the HTTP status a
 * transport should use (stateless-era envelope errors are 400, unknown
 * methods 404; everything else 200).
 *
 * @example
 * ```ts
 * import type { Reply } from "@anubis/core";
 * const reply: Reply = { message: { jsonrpc: "2.0", id: 1, result: {} }, status: 200 };
 * ```
 */
export interface Reply {
  /** The JSON-RPC response. */
  message: JsonRpcResponse;
  /** The suggested HTTP status. */
  status: number;
}

const MRTR_METHODS = new Set(["tools/call", "prompts/get", "resources/read"]);
const UNWRAPPED = new Set(["initialize", "ping", "server/discover", "subscriptions/listen"]);
const STATUS_400 = new Set<number>([
  ErrorCode.HEADER_MISMATCH,
  ErrorCode.MISSING_REQUIRED_CLIENT_CAPABILITY,
  ErrorCode.UNSUPPORTED_PROTOCOL_VERSION,
]);
const NEVER = new AbortController().signal;

/** Marks an error found in the request envelope, answered with HTTP 400. */
class EnvelopeError extends McpError {}

/** Carries a handler's `NO_REPLY` out of the routing. */
class NoReply extends Error {}

function methodSet(dialect: Dialect): Set<string> {
  let set = methodSets.get(dialect);
  if (!set) methodSets.set(dialect, set = new Set(dialect.requestMethods));
  return set;
}
const methodSets = new WeakMap<Dialect, Set<string>>();

/**
 * Serves one {@link McpServer} for every connection of a process. Create one
 * per transport (they share the server's notifier).
 *
 * @example
 * ```ts
 * import { defineServer, Engine, Registry } from "@anubis/core";
 * const server = defineServer({ name: "s", version: "1.0.0" });
 * const engine = new Engine(server, { registry: new Registry() });
 * console.log(engine.supportedVersions()); // []
 * engine.close();
 * ```
 */
export class Engine {
  /** The server served. */
  readonly server: McpServer;
  /** The dialects. */
  readonly registry: Registry;
  readonly #hub: SubscriptionHub;
  readonly #closing = new AbortController();
  readonly #versions: string[];

  /**
   * Creates an engine for a server.
   *
   * @param server The defined server.
   * @param options The registry and limits.
   */
  constructor(server: McpServer, options: EngineOptions) {
    this.server = server;
    this.registry = options.registry;
    const allowed = server.definition.supportedProtocolVersions;
    this.#versions = this.registry.versions().filter((v) => !allowed || allowed.includes(v));
    this.#hub = new SubscriptionHub(
      server.notify,
      server.capabilities,
      options.maxSubscriptions ?? 1024,
    );
  }

  /** The versions served, newest first: the list `server/discover` and `-32022` name. */
  supportedVersions(): string[] {
    return [...this.#versions];
  }

  /**
   * The dialect of a served version, or `undefined`.
   *
   * @param version The version string.
   * @param era Only of this era.
   */
  dialect(version: unknown, era?: Era): Dialect | undefined {
    const dialect = this.registry.get(version);
    if (!dialect || !this.#versions.includes(dialect.version)) return undefined;
    return era && dialect.era !== era ? undefined : dialect;
  }

  /** The live legacy sessions created by {@link createSession}. */
  get sessions(): ReadonlySet<Session> {
    return this.#hub.sessions;
  }

  /** The number of open `subscriptions/listen` streams. */
  get listenerCount(): number {
    return this.#hub.listenerCount;
  }

  /**
   * Creates a legacy session (uninitialized until `initialize`).
   *
   * @param options Id, transport kind and the unrelated-message sink.
   * @returns The session.
   */
  createSession(options: SessionOptions): Session {
    const session = new Session(options);
    this.#hub.sessions.add(session);
    return session;
  }

  /**
   * Closes a session and forgets it.
   *
   * @param session The session.
   */
  dropSession(session: Session): void {
    session.close();
    this.#hub.sessions.delete(session);
  }

  /**
   * Validates the `_meta` envelope of a stateless request (digest §2.4 step
   * 4), so a transport can run its header checks in the spec's order.
   *
   * @param request A request that claims the stateless era.
   * @returns The `-32602` error, or `undefined` when the envelope is valid.
   */
  validateEnvelope(request: JsonRpcRequest | JsonRpcNotification): McpError | undefined {
    const schema = this.registry.get(this.registry.versions("stateless")[0])?.requestMetaSchema;
    if (!schema) return undefined;
    const meta = request.params?._meta;
    const checked = s.validate(schema, meta);
    if (checked.ok) return undefined;
    return new EnvelopeError(
      ErrorCode.INVALID_PARAMS,
      `Invalid request _meta: ${s.formatIssues(checked.issues)}`,
      {
        envelope: checked.issues.map((i) => ({
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
   * @returns The reply, if any.
   */
  async handle(message: JsonRpcMessage, exchange: Exchange): Promise<Reply | undefined> {
    try {
      if (!("method" in message)) {
        exchange.session?.resolve(message);
        return undefined;
      }
      if (!("id" in message)) {
        await this.#notification(message, exchange);
        return undefined;
      }
      const claim = classifyEra(message);
      return claim.era === "stateless"
        ? await this.#stateless(message, exchange, claim.version)
        : await this.#legacy(message, exchange);
    } catch (error) {
      // Only reached on a defect in the engine itself; the client still gets an answer.
      console.error("anubis: engine failure:", error);
      if (!("method" in message) || !("id" in message)) return undefined;
      return {
        message: errorResponse(message.id, ErrorCode.INTERNAL_ERROR, "Internal error"),
        status: 500,
      };
    }
  }

  /**
   * Handles a JSON-RPC batch (2025-03-26): every request is served
   * concurrently and the responses are returned in request order.
   *
   * @param messages The batch entries.
   * @param exchange Their surroundings.
   * @returns The responses (empty when the batch held only notifications and responses).
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
   */
  async restoreSession(
    record: SessionRecord,
    options: SessionOptions,
    exchange: Exchange,
  ): Promise<Session> {
    const dialect = this.dialect(record.protocolVersion, "legacy");
    if (!dialect) {
      throw new McpError(
        ErrorCode.INTERNAL_ERROR,
        `Stored session uses unserved version ${record.protocolVersion}`,
      );
    }
    const session = this.createSession({ ...options, id: record.id });
    session.dialect = dialect;
    session.clientInfo = record.clientInfo;
    session.clientCapabilities = record.clientCapabilities;
    session.initialized = record.initialized;
    session.logLevel = record.logLevel;
    for (const uri of record.subscriptions) session.subscriptions.add(uri);
    session.assigns.value = { ...record.assigns };
    const frame = legacyFrame(this.server, session, exchange, "session/restore", undefined, NEVER);
    try {
      const expired = this.server.definition.handleSessionExpired;
      if (expired) {
        const accepted = await expired(record.id, frame);
        if (accepted?.clientInfo) session.clientInfo = accepted.clientInfo;
      } else {
        await this.server.definition.init?.(session.clientInfo as Implementation, frame);
      }
    } catch (error) {
      this.dropSession(session);
      throw McpError.from(error);
    }
    return session;
  }

  /** Ends every open listen stream gracefully and stops delivering changes. */
  close(): void {
    this.#closing.abort();
    this.#hub.close();
  }

  async #notification(message: JsonRpcNotification, exchange: Exchange): Promise<void> {
    const session = exchange.session;
    const params = message.params ?? {};
    if (message.method === "notifications/cancelled") {
      const id = params.requestId;
      if (typeof id === "string" || typeof id === "number") {
        session?.cancel(id, typeof params.reason === "string" ? params.reason : undefined);
      }
      return;
    }
    if (session) session.lastActivity = Date.now();
    if (message.method === "notifications/initialized") {
      if (session?.dialect) session.initialized = true;
      return;
    }
    const handler = this.server.definition.handleNotification;
    const dialect = session?.dialect;
    if (!handler || !dialect || classifyEra(message).era === "stateless") return;
    const schema = dialect.notificationParamsSchema(message.method);
    if (!schema || !s.validate(schema, params).ok) return;
    try {
      await handler(
        message,
        legacyFrame(this.server, session, exchange, message.method, undefined, NEVER),
      );
    } catch (error) {
      console.error(`anubis: handleNotification(${message.method}) failed:`, error);
    }
  }

  async #legacy(request: JsonRpcRequest, exchange: Exchange): Promise<Reply | undefined> {
    const { session } = exchange;
    const { id, method } = request;
    if (session) session.lastActivity = Date.now();
    if (method === "initialize") return this.#initialize(request, exchange);
    if (!session?.dialect) {
      if (method === "ping") return { message: resultResponse(id, {}), status: 200 };
      return this.#error(
        request,
        new McpError(ErrorCode.INVALID_REQUEST, "Server not initialized"),
      );
    }
    const dialect = session.dialect;
    const controller = session.track(id);
    try {
      const frame = legacyFrame(this.server, session, exchange, method, request, controller.signal);
      const result = await this.#dispatch(request, dialect, frame, session);
      if (controller.signal.aborted) return undefined;
      return {
        message: resultResponse(id, dialect.encodeResult(method, result, this.#encodeContext())),
        status: 200,
      };
    } catch (error) {
      if (controller.signal.aborted || error instanceof NoReply) return undefined;
      return this.#error(request, error);
    } finally {
      session.untrack(id, controller);
    }
  }

  async #initialize(request: JsonRpcRequest, exchange: Exchange): Promise<Reply> {
    const session = exchange.session;
    if (!session) {
      return this.#error(
        request,
        new McpError(ErrorCode.INVALID_REQUEST, "No session to initialize"),
      );
    }
    if (session.dialect) {
      return this.#error(
        request,
        new McpError(ErrorCode.INVALID_REQUEST, "Session already initialized"),
      );
    }
    const newest = this.registry.get(this.registry.versions("legacy")[0]);
    const schema = newest?.requestParamsSchema("initialize");
    const params = request.params ?? {};
    const checked = schema ? s.validate(schema, params) : { ok: true as const };
    if (!checked.ok) {
      return this.#error(
        request,
        new McpError(
          ErrorCode.INVALID_PARAMS,
          `Invalid initialize params: ${s.formatIssues(checked.issues)}`,
        ),
      );
    }
    const dialect = this.registry.negotiate(params.protocolVersion, this.#versions);
    if (!dialect) {
      return this.#error(
        request,
        new McpError(ErrorCode.INVALID_PARAMS, "Unsupported protocol version", {
          supported: this.supportedVersions(),
          requested: params.protocolVersion,
        }),
      );
    }
    session.dialect = dialect;
    session.clientInfo = (params.clientInfo ?? {}) as Implementation;
    session.clientCapabilities = (params.capabilities ?? {}) as ClientCapabilities;
    const frame = legacyFrame(this.server, session, exchange, "initialize", request, NEVER);
    try {
      await this.server.definition.init?.(session.clientInfo as Implementation, frame);
      const result: Record<string, unknown> = {
        protocolVersion: dialect.version,
        capabilities: dialect.serverCapabilities(this.server.capabilities),
        serverInfo: this.server.info,
      };
      const instructions = await this.#instructions(frame);
      if (instructions !== undefined) result.instructions = instructions;
      return {
        message: resultResponse(
          request.id,
          dialect.encodeResult("initialize", result, this.#encodeContext()),
        ),
        status: 200,
      };
    } catch (error) {
      // A rejected handshake leaves the session uninitialized; the transport drops it.
      session.dialect = undefined;
      return this.#error(request, error);
    }
  }

  async #stateless(
    request: JsonRpcRequest,
    exchange: Exchange,
    version: unknown,
  ): Promise<Reply | undefined> {
    const envelope = this.validateEnvelope(request);
    if (envelope) return this.#error(request, envelope, "stateless");
    const dialect = this.dialect(version, "stateless");
    if (!dialect) {
      return this.#error(
        request,
        new McpError(ErrorCode.UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version", {
          supported: this.supportedVersions(),
          requested: version,
        }),
        "stateless",
      );
    }
    const params = request.params!;
    const meta = params._meta as Record<string, unknown>;
    const controller = new AbortController();
    const tracked = exchange.session?.track(request.id);
    const abort = () => controller.abort();
    exchange.signal?.addEventListener("abort", abort, { once: true });
    tracked?.signal.addEventListener("abort", abort, { once: true });
    if (exchange.signal?.aborted) controller.abort();
    const inputs = MRTR_METHODS.has(request.method) ? new InputCollector({}) : undefined;
    const context: FrameContext = {
      era: "stateless",
      protocolVersion: dialect.version,
      clientInfo: (meta[MetaKey.clientInfo] ?? {}) as Partial<Implementation>,
      clientCapabilities: meta[MetaKey.clientCapabilities] as ClientCapabilities,
      initialized: true,
      method: request.method,
      requestId: request.id,
      meta,
      transport: exchange.transport,
      headers: exchange.headers ?? {},
      assigns: exchange.assigns ?? {},
      authInfo: exchange.authInfo,
      signal: controller.signal,
    };
    const emit = emitter(exchange);
    const frame = new Frame({
      context,
      dialect,
      notify: this.server.notify,
      assigns: { value: { ...exchange.assigns } },
      emit,
      logLevel: () => meta[MetaKey.logLevel] as LogLevel | undefined,
      canLog: this.server.capabilities.logging !== undefined,
      inputs,
    });
    const retry = params.inputResponses !== undefined || params.requestState !== undefined;
    try {
      let result: Record<string, unknown> | undefined;
      if (inputs) {
        result = await this.#withInputs(request, dialect, frame, inputs, controller);
      } else if (request.method === "subscriptions/listen") {
        await this.server.definition.init?.(context.clientInfo as Implementation, frame);
        const graceful = await this.#hub.listen(
          request.id,
          (params.notifications ?? {}) as SubscriptionFilter,
          emit,
          controller.signal,
          this.#closing.signal,
        );
        if (!graceful) return undefined;
        result = { _meta: { [MetaKey.subscriptionId]: request.id } };
      } else {
        await this.server.definition.init?.(context.clientInfo as Implementation, frame);
        result = await this.#dispatch(request, dialect, frame);
      }
      if (controller.signal.aborted && result.resultType !== "input_required") return undefined;
      const encoded = dialect.encodeResult(
        request.method,
        result,
        this.#encodeContext(request.method, frame, retry),
      );
      return { message: resultResponse(request.id, encoded), status: 200 };
    } catch (error) {
      if (controller.signal.aborted || error instanceof NoReply) return undefined;
      return this.#error(request, error, "stateless");
    } finally {
      exchange.signal?.removeEventListener("abort", abort);
      if (tracked) exchange.session!.untrack(request.id, tracked);
    }
  }

  /** Runs a multi round-trip capable request: answers in, `input_required` out. */
  async #withInputs(
    request: JsonRpcRequest,
    dialect: Dialect,
    frame: Frame,
    inputs: InputCollector,
    controller: AbortController,
  ): Promise<Record<string, unknown>> {
    const params = request.params!;
    const target = String(request.method === "resources/read" ? params.uri : params.name);
    let round = 0;
    let carried: Record<string, unknown> = {};
    if (typeof params.requestState === "string") {
      const state = await this.server.requestState.open(
        params.requestState,
        request.method,
        target,
      );
      carried = state.answers;
      Object.assign(inputs.answers, carried);
      round = state.round;
    }
    Object.assign(inputs.answers, params.inputResponses as Record<string, unknown> | undefined);
    const work = (async () => {
      await this.server.definition.init?.(frame.context.clientInfo as Implementation, frame);
      return await this.#dispatch(request, dialect, frame);
    })();
    const parked = inputs.requested.then(() =>
      new Promise<undefined>((r) => setTimeout(() => r(undefined), 0))
    );
    const result = await Promise.race([work, parked]);
    if (result !== undefined) return result;
    work.catch(() => {});
    controller.abort("input required");
    // Earlier rounds' answers plus the ones this round used; unknown extra
    // keys the client sent are not carried on.
    const answers: Record<string, unknown> = { ...carried };
    for (const key of inputs.used) answers[key] = inputs.answers[key];
    for (const key of inputs.pending.keys()) delete answers[key];
    return {
      resultType: "input_required",
      inputRequests: Object.fromEntries(inputs.pending),
      requestState: await this.server.requestState.seal({
        method: request.method,
        target,
        answers,
        round: round + 1,
      }),
    };
  }

  #dispatch(
    request: JsonRpcRequest,
    dialect: Dialect,
    frame: Frame,
    session?: Session,
  ): Promise<Record<string, unknown>> {
    const { method } = request;
    const known = methodSet(dialect).has(method);
    const handleRequest = this.server.definition.handleRequest;
    if (!known && !handleRequest) throw notFound(method);
    const next = () => this.#route(request, dialect, frame, session, known);
    if (!handleRequest || UNWRAPPED.has(method)) return next();
    return Promise.resolve(handleRequest(request, frame, next)).then((result) => {
      if (result === NO_REPLY) throw new NoReply();
      return result;
    });
  }

  async #route(
    request: JsonRpcRequest,
    dialect: Dialect,
    frame: Frame,
    session: Session | undefined,
    known: boolean,
  ): Promise<Record<string, unknown>> {
    const { method } = request;
    if (!known) throw notFound(method);
    const capability = REQUIRED_CAPABILITY[method];
    const caps = this.server.capabilities;
    if (capability && !caps[capability]) throw notFound(method);
    const params = request.params ?? {};
    const schema = dialect.requestParamsSchema(method);
    if (schema) {
      const checked = s.validate(schema, params);
      if (!checked.ok) {
        throw new McpError(
          ErrorCode.INVALID_PARAMS,
          `Invalid params: ${s.formatIssues(checked.issues)}`,
        );
      }
    }
    switch (method) {
      case "ping":
        return {};
      case "server/discover": {
        const result: Record<string, unknown> = {
          supportedVersions: this.supportedVersions(),
          capabilities: dialect.serverCapabilities(caps),
        };
        const instructions = await this.#instructions(frame);
        if (instructions !== undefined) result.instructions = instructions;
        return result;
      }
      case "logging/setLevel":
        session!.logLevel = params.level as LogLevel;
        return {};
      case "resources/subscribe":
      case "resources/unsubscribe":
        if (!caps.resources?.subscribe) throw notFound(method);
        if (method === "resources/subscribe") session!.subscriptions.add(params.uri as string);
        else session!.subscriptions.delete(params.uri as string);
        return {};
    }
    const route = DEFAULT_ROUTES[method];
    if (!route) throw notFound(method);
    return route({ server: this.server, dialect, frame, request, params });
  }

  async #instructions(frame: Frame): Promise<string | undefined> {
    const instructions = this.server.definition.instructions;
    return typeof instructions === "function" ? await instructions(frame) : instructions;
  }

  #encodeContext(method?: string, frame?: Frame, retry = false) {
    const hints = this.server.definition.cacheHints;
    const cacheHint = method && frame && hints && CACHEABLE_METHODS.has(method)
      ? hints(method, frame)
      : undefined;
    return { serverInfo: this.server.info, cacheHint, retry };
  }

  #error(request: JsonRpcRequest, thrown: unknown, era: Era = "legacy"): Reply {
    const error = McpError.from(thrown);
    let status = 200;
    if (era === "stateless") {
      if (thrown instanceof EnvelopeError || STATUS_400.has(error.code)) status = 400;
      else if (error.code === ErrorCode.METHOD_NOT_FOUND) status = 404;
    }
    return { message: errorResponse(request.id, error.code, error.message, error.data), status };
  }
}

function notFound(method: string): McpError {
  return new McpError(ErrorCode.METHOD_NOT_FOUND, `Method not found: ${method}`);
}
