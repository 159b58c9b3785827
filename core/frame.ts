/**
 * The `Frame`: what every handler receives. User data in `assigns`, the
 * read-only `context` of the request, and request-scoped helpers that work in
 * both eras. Also the engine's side of it (not exported): the context class
 * whose signal is made on first read, and the input collector of a request
 * that may ask the client for input.
 *
 * @module
 */

import type { AuthInfo } from "./auth_info.ts";
import type { Cancellation } from "./cancellation.ts";
import type { Dialect } from "./dialect.ts";
import type { Exchange } from "./exchange.ts";
import { ErrorCode, McpError } from "./errors.ts";
import { ACCEPTED, type AnswerCheck, checkContent } from "./_elicitation_check.ts";
import type { Validation } from "./json_schema.ts";
import type { JsonRpcMessage, RequestId } from "./json_rpc.ts";
import { MetaKey } from "./meta.ts";
import type { Notifier } from "./notifier.ts";
import type { Session } from "./legacy/session.ts";
import type { Awaitable } from "./awaitable.ts";
import { EMPTY } from "./_objects.ts";
import * as s from "./schema.ts";
import type {
  ClientCapabilities,
  CreateMessageParams,
  CreateMessageResult,
  ElicitParams,
  ElicitResult,
  Era,
  Implementation,
  ListRootsResult,
  LogLevel,
} from "./types.ts";
import { LOG_LEVELS } from "./types.ts";

/**
 * The read-only facts of the request a handler serves. A legacy session's
 * `clientInfo` and `clientCapabilities` are deep-frozen when the session gets
 * them (at `initialize` or restore), so a handler cannot change what later
 * requests see: a write throws a `TypeError` (modules are strict code). In the
 * stateless era they are the request's own `_meta`, not frozen (that would
 * cost every request): a change there reaches only that request.
 *
 * @example
 * ```ts
 * import type { FrameContext } from "@anubis/core";
 * function who(context: FrameContext): string {
 *   return `${context.clientInfo.name ?? "anonymous"} over ${context.transport}`;
 * }
 * ```
 */
export interface FrameContext {
  /** The era of the request. */
  readonly era: Era;
  /** The protocol version of the request (the negotiated one in the legacy era). */
  readonly protocolVersion: string;
  /** The legacy session id, when the transport has one. */
  readonly sessionId?: string;
  /** The client's identity; `{}` when the client sent none. */
  readonly clientInfo: Partial<Implementation>;
  /** The client's capabilities (of the session, or of this request). */
  readonly clientCapabilities: ClientCapabilities;
  /** Whether `notifications/initialized` arrived (always `true` in the stateless era). */
  readonly initialized: boolean;
  /** The method being served, when serving a request or notification. */
  readonly method?: string;
  /** The request id, when serving a request. */
  readonly requestId?: RequestId;
  /** The request's `params._meta`. */
  readonly meta: Readonly<Record<string, unknown>>;
  /** The transport kind: `"stdio"`, `"http"` or another adapter's name. */
  readonly transport: string;
  /** Request headers (lowercased names), for HTTP. */
  readonly headers: Readonly<Record<string, string>>;
  /** What an HTTP middleware attached to the request. */
  readonly assigns: Readonly<Record<string, unknown>>;
  /**
   * Authentication facts the transport's auth or a middleware attached, if
   * any (an `AuthInfo` from the HTTP transport; typed as such on `frame.auth`).
   */
  readonly authInfo?: unknown;
  /** Aborts when the request is cancelled or its client went away. */
  readonly signal: AbortSignal;
}

/** A {@link FrameContext} whose `signal` comes from a {@link Cancellation} on first read. */
export class EngineFrameContext implements FrameContext {
  readonly era: Era;
  readonly protocolVersion: string;
  readonly sessionId?: string;
  readonly clientInfo: Partial<Implementation>;
  readonly clientCapabilities: ClientCapabilities;
  readonly initialized: boolean;
  readonly method?: string;
  readonly requestId?: RequestId;
  readonly meta: Readonly<Record<string, unknown>>;
  readonly transport: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly assigns: Readonly<Record<string, unknown>>;
  readonly authInfo?: unknown;
  readonly #cancellation: Cancellation;

  // Positional, with the transport's facts read from the exchange: built for
  // every request, so no temporary object of facts is made to build it from.
  constructor(
    era: Era,
    protocolVersion: string,
    sessionId: string | undefined,
    clientInfo: Partial<Implementation>,
    clientCapabilities: ClientCapabilities,
    initialized: boolean,
    method: string | undefined,
    requestId: RequestId | undefined,
    meta: Readonly<Record<string, unknown>>,
    exchange: Exchange,
    cancellation: Cancellation,
  ) {
    this.era = era;
    this.protocolVersion = protocolVersion;
    this.sessionId = sessionId;
    this.clientInfo = clientInfo;
    this.clientCapabilities = clientCapabilities;
    this.initialized = initialized;
    this.method = method;
    this.requestId = requestId;
    this.meta = meta;
    this.transport = exchange.transport;
    this.headers = exchange.headers ?? EMPTY;
    this.assigns = exchange.assigns ?? EMPTY;
    this.authInfo = exchange.authInfo;
    this.#cancellation = cancellation;
  }

  /** Aborts when the request is cancelled or its client went away. */
  get signal(): AbortSignal {
    return this.#cancellation.signal;
  }
}

const COMPLETE = "notifications/elicitation/complete";

/** Hooks the engine gives a frame; not part of the public API. */
export interface FrameScope {
  /** The request's read-only facts. */
  context: FrameContext;
  /** The dialect of the request. */
  dialect: Dialect;
  /** The server's notifier. */
  notify: Notifier;
  /** The holder of the assigns (the session's, or the request's own). */
  assigns: { value: Record<string, unknown> };
  /** Sends a message related to this request (its SSE stream, or stdout). */
  emit(message: JsonRpcMessage): Promise<void>;
  /**
   * The minimum level this request may log at, or `undefined` for no logs.
   * Absent: the level the request's own `_meta` names (stateless era), read
   * from the context, so a stateless request needs no closure for it.
   */
  logLevel?(): LogLevel | undefined;
  /** Whether the server declared the logging capability. */
  canLog: boolean;
  /** Sends a real server-to-client request (legacy era). */
  request?(method: string, params: Record<string, unknown>, signal: AbortSignal): Promise<unknown>;
  /** Collects multi round-trip input (stateless era). */
  inputs?: InputCollector;
  /**
   * The legacy session, whose own stream (the standalone SSE stream, or
   * stdout) outlives the request.
   */
  session?: Session;
  /** Closes this request's SSE connection for polling, when the transport can resume it. */
  closeStream?(): boolean;
  /**
   * Turns the rest of this call into a task (stateless era, a client that
   * declared the tasks extension): the request is answered with the task and
   * `work` runs in the background with the task's frame.
   */
  startTask?<T>(work: (frame: Frame) => Awaitable<T>): Promise<T>;
}

/**
 * Collects the input requests of one stateless round: answers come from the
 * retry, missing ones are gathered and the handler is parked.
 */
export class InputCollector {
  // Made on first use: most requests never ask for input, and carry no answers.
  #answers: Record<string, unknown> | undefined;
  #used: Set<string> | undefined;
  #pending: Map<string, { method: string; params: Record<string, unknown> }> | undefined;
  #requested: Promise<void> | undefined;
  #resolve: (() => void) | undefined;
  #wake: (() => void) | undefined;

  /** Answers by key: those of earlier rounds plus this retry's. */
  get answers(): Record<string, unknown> {
    return this.#answers ??= {};
  }

  /** Keys whose answers the handler used this round. */
  get used(): Set<string> {
    return this.#used ??= new Set();
  }

  /** Input requests this round still needs, by key. */
  get pending(): Map<string, { method: string; params: Record<string, unknown> }> {
    return this.#pending ??= new Map();
  }

  /** Resolves once the first input was requested. */
  get requested(): Promise<void> {
    if (!this.#requested) {
      this.#requested = this.#pending
        ? Promise.resolve()
        : new Promise((resolve) => (this.#resolve = resolve));
    }
    return this.#requested;
  }

  /**
   * Calls `wake` once, when the first input is requested (or at once if one was).
   *
   * @param wake The engine's callback.
   */
  onRequested(wake: () => void): void {
    if (this.#pending) wake();
    else this.#wake = wake;
  }

  /** Records a needed input and wakes the engine. */
  need(key: string, method: string, params: Record<string, unknown>): void {
    const first = !this.#pending;
    this.pending.set(key, { method, params });
    if (!first) return;
    this.#resolve?.();
    this.#wake?.();
  }
}

/** The prefix of an input key the frame derives, by method (stateless rounds and tasks). */
export const KEY_PREFIX: Readonly<Record<string, string>> = {
  "elicitation/create": "elicitation",
  "sampling/createMessage": "sampling",
  "roots/list": "roots",
};

/**
 * Options of the input helpers.
 *
 * @example
 * ```ts
 * import type { InputOptions } from "@anubis/core";
 * const options: InputOptions = { key: "user_name" };
 * ```
 */
export interface InputOptions {
  /**
   * The stateless input key (default: derived from the call order, which is
   * stable across rounds). Ignored in the legacy era.
   */
  key?: string;
}

/**
 * What a handler receives. In the legacy era `assigns` lives as long as the
 * session; in the stateless era, as long as the request.
 *
 * @example
 * ```ts
 * import type { Frame } from "@anubis/core";
 * async function handler(_args: unknown, frame: Frame) {
 *   await frame.progress(50, { total: 100 });
 *   await frame.log("info", "half way");
 *   frame.assigns.calls = Number(frame.assigns.calls ?? 0) + 1;
 *   return "done";
 * }
 * ```
 */
export class Frame {
  #scope: FrameScope;
  #inputCount = 0;

  /**
   * Creates the instance. The engine makes frames; handlers receive them.
   *
   * @param scope The engine's hooks for this request.
   * @ignore
   */
  constructor(scope: FrameScope) {
    this.#scope = scope;
  }

  /**
   * User data: per session (legacy) or per request (stateless).
   *
   * @example
   * ```ts
   * import { defineTool } from "@anubis/core";
   * const count = defineTool({
   *   name: "count",
   *   handler: (_args, frame) => {
   *     const calls = Number(frame.assigns.calls ?? 0) + 1;
   *     frame.assigns.calls = calls; // the session's next call sees it (legacy era)
   *     return `call ${calls}`;
   *   },
   * });
   * ```
   */
  get assigns(): Record<string, unknown> {
    return this.#scope.assigns.value;
  }
  /**
   * Replaces the user data (of the session, or of the request).
   *
   * @example
   * ```ts
   * import { defineServer } from "@anubis/core";
   * const server = defineServer({
   *   name: "s",
   *   version: "1.0.0",
   *   init: (clientInfo, frame) => {
   *     frame.assigns = { client: clientInfo.name ?? "anonymous", startedAt: Date.now() };
   *   },
   * });
   * ```
   */
  set assigns(value: Record<string, unknown>) {
    this.#scope.assigns.value = value;
  }

  /**
   * The read-only facts of this request.
   *
   * @example
   * ```ts
   * import { defineTool } from "@anubis/core";
   * const whoami = defineTool({
   *   name: "whoami",
   *   handler: (_args, { context }) => {
   *     const client = context.clientInfo.name ?? "anonymous";
   *     return `${client}, ${context.era} ${context.protocolVersion} over ${context.transport}`;
   *   },
   * });
   * ```
   */
  get context(): FrameContext {
    return this.#scope.context;
  }

  /**
   * The caller, as the transport's auth verified it (`auth` of
   * `@anubis/transport-http`) or a middleware attached it: the request
   * context's `authInfo`, in both eras; `undefined` for an unauthenticated
   * caller (stdio, HTTP without auth).
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { defineServer } from "@anubis/core";
   * import { createHttpHandler } from "@anubis/transport-http";
   * const server = defineServer({
   *   name: "s",
   *   version: "1.0.0",
   *   tools: [{
   *     name: "whoami",
   *     handler: (_args, frame) => `${frame.auth?.subject ?? "anonymous"} ${frame.auth?.scopes}`,
   *   }],
   * });
   * const handler = createHttpHandler(server, {
   *   auth: {
   *     verifyToken: (token) => Promise.resolve({ subject: token, scopes: ["mcp"] }),
   *     resource: "http://localhost/mcp",
   *   },
   * });
   * const _meta = {
   *   "io.modelcontextprotocol/protocolVersion": "2026-07-28",
   *   "io.modelcontextprotocol/clientCapabilities": {},
   * };
   * const response = await handler(
   *   new Request("http://localhost/mcp", {
   *     method: "POST",
   *     headers: {
   *       authorization: "Bearer ada",
   *       accept: "application/json, text/event-stream",
   *       "content-type": "application/json",
   *       "mcp-protocol-version": "2026-07-28",
   *       "mcp-method": "tools/call",
   *       "mcp-name": "whoami",
   *     },
   *     body: JSON.stringify({
   *       jsonrpc: "2.0",
   *       id: 1,
   *       method: "tools/call",
   *       params: { name: "whoami", arguments: {}, _meta },
   *     }),
   *   }),
   * );
   * assert.equal((await response.json()).result.content[0].text, "ada mcp");
   * handler.close();
   * ```
   */
  get auth(): AuthInfo | undefined {
    const info = this.#scope.context.authInfo;
    return info !== null && typeof info === "object" ? info as AuthInfo : undefined;
  }

  /**
   * Aborts when the request is cancelled.
   *
   * @example
   * ```ts
   * import { defineTool } from "@anubis/core";
   * const crunch = defineTool({
   *   name: "crunch",
   *   inputSchema: { type: "object", properties: { items: { type: "array", items: { type: "string" } } }, required: ["items"] },
   *   handler: async ({ items }, frame) => {
   *     let done = 0;
   *     for (const _item of items) {
   *       frame.signal.throwIfAborted(); // a cancelled request gets no answer
   *       await Promise.resolve(); // the work on one item
   *       done++;
   *     }
   *     return `${done} items`;
   *   },
   * });
   * ```
   */
  get signal(): AbortSignal {
    return this.#scope.context.signal;
  }

  /**
   * Publishes list changes and resource updates.
   *
   * @example
   * ```ts
   * import { defineTool } from "@anubis/core";
   * const notes = new Map<string, string>();
   * const addNote = defineTool({
   *   name: "add_note",
   *   inputSchema: { type: "object", properties: { id: { type: "string" }, text: { type: "string" } }, required: ["id", "text"] },
   *   handler: ({ id, text }, frame) => {
   *     const isNew = !notes.has(id);
   *     notes.set(id, text);
   *     if (isNew) frame.notify.resourcesListChanged();
   *     else frame.notify.resourceUpdated(`notes://${id}`);
   *     return "saved";
   *   },
   * });
   * ```
   */
  get notify(): Notifier {
    return this.#scope.notify;
  }

  /**
   * Closes the connection of this request's SSE stream before the result
   * (SEP-1699 polling): the client reconnects with `Last-Event-ID` and
   * receives the rest of the stream, the result included. Only legacy HTTP
   * sessions of 2025-11-25 with an event store can; elsewhere nothing happens.
   *
   * @returns Whether the stream's connection was closed.
   *
   * @example
   * ```ts
   * import { defineTool } from "@anubis/core";
   * const report = defineTool({
   *   name: "report",
   *   handler: async (_args, frame) => {
   *     await frame.progress(10, { message: "started" });
   *     // A long wait ahead: free the connection; the client comes back for the rest.
   *     const closed = frame.closeStream();
   *     await frame.progress(100, { message: closed ? "resumed" : "still connected" });
   *     return "report ready";
   *   },
   * });
   * ```
   */
  closeStream(): boolean {
    return this.#scope.closeStream?.() ?? false;
  }

  /**
   * Runs `work` as a task when this call can become one, else at once with
   * this frame. A call can become a task in the stateless era (2026-07-28)
   * when its client declared the tasks extension (`io.modelcontextprotocol/tasks`)
   * and the tool is task-capable (`execution.taskSupport`): the request is
   * answered with the task (`resultType: "task"`) and `work` continues in the
   * background with the task's frame, whose `elicit()` and `sample()` move
   * the task to `input_required` until the client answers with
   * `tasks/update`. Only the first call of a request starts a task.
   *
   * The engine runs a task-capable tool's whole handler this way; a tool with
   * `taskStart: "handler"` calls it itself, so the input it asks first goes
   * through the request's own rounds (multi round-trip requests) and only the
   * rest runs as a task.
   *
   * @param work The work, given the frame it runs with.
   * @returns What `work` returns.
   *
   * @example
   * ```ts
   * import { defineServer, defineTool } from "@anubis/core";
   * import { connect } from "@anubis/testing";
   * import assert from "node:assert/strict";
   * const book = defineTool({
   *   name: "book",
   *   execution: { taskSupport: "optional" },
   *   taskStart: "handler",
   *   handler: async (_args, frame) => {
   *     const seat = await frame.elicit({
   *       message: "Which seat?",
   *       requestedSchema: { type: "object", properties: { seat: { type: "string" } } },
   *     }, { key: "seat" });
   *     // The booking itself may take long: a task, where the client takes one.
   *     return await frame.runAsTask(() => `Booked seat ${seat.content?.seat}`);
   *   },
   * });
   * const server = defineServer({ name: "s", version: "1.0.0", tools: [book] });
   * // This client declares no tasks extension: the work runs in the request.
   * const client = await connect(server, {
   *   elicit: () => ({ action: "accept", content: { seat: "12A" } }),
   * });
   * const result = await client.callTool("book");
   * assert.deepEqual(result.content, [{ type: "text", text: "Booked seat 12A" }]);
   * client.close();
   * ```
   */
  runAsTask<T>(work: (frame: Frame) => Awaitable<T>): Promise<T> {
    const start = this.#scope.startTask;
    if (start) {
      // One task per request: the task's own frame starts no other.
      this.#scope.startTask = undefined;
      return start(work);
    }
    try {
      return Promise.resolve(work(this));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * Reports progress, when the request asked for it with a `progressToken`.
   *
   * @param progress The progress so far; must increase.
   * @param options The total and a message.
   *
   * @example
   * ```ts
   * import { defineTool } from "@anubis/core";
   * const upload = defineTool({
   *   name: "upload",
   *   inputSchema: { type: "object", properties: { files: { type: "array", items: { type: "string" } } }, required: ["files"] },
   *   handler: async ({ files }, frame) => {
   *     for (let i = 0; i < files.length; i++) {
   *       await frame.progress(i + 1, { total: files.length, message: `uploaded ${files[i]}` });
   *     }
   *     return `${files.length} files`;
   *   },
   * });
   * ```
   */
  async progress(
    progress: number,
    options: { total?: number; message?: string } = {},
  ): Promise<void> {
    const token = this.#scope.context.meta.progressToken;
    if ((typeof token !== "string" && typeof token !== "number") || this.signal.aborted) return;
    const params: Record<string, unknown> = { progressToken: token, progress };
    if (options.total !== undefined) params.total = options.total;
    if (options.message !== undefined) params.message = options.message;
    await this.#scope.emit({ jsonrpc: "2.0", method: "notifications/progress", params });
  }

  /**
   * Sends a log message when the client's level allows it (legacy:
   * `logging/setLevel`; stateless: the request's `_meta` log level, and no
   * logs at all without one).
   *
   * @param level The message's level.
   * @param data Any JSON value.
   * @param logger The logger's name.
   *
   * @example
   * ```ts
   * import { defineTool } from "@anubis/core";
   * const sync = defineTool({
   *   name: "sync",
   *   handler: async (_args, frame) => {
   *     await frame.log("info", { step: "sync started" }, "sync");
   *     await frame.log("debug", "nothing to do", "sync"); // only sent if the client asked for debug
   *     return "in sync";
   *   },
   * });
   * ```
   */
  async log(level: LogLevel, data: unknown, logger?: string): Promise<void> {
    const scope = this.#scope;
    const minimum = scope.logLevel
      ? scope.logLevel()
      : scope.context.meta[MetaKey.logLevel] as LogLevel | undefined;
    if (!scope.canLog || !minimum || this.signal.aborted) return;
    if (LOG_LEVELS.indexOf(level) < LOG_LEVELS.indexOf(minimum)) return;
    // `data` is required on the wire; `undefined` would vanish in JSON.
    const params: Record<string, unknown> = { level, data: data ?? null };
    if (logger !== undefined) params.logger = logger;
    await this.#scope.emit({ jsonrpc: "2.0", method: "notifications/message", params });
  }

  /**
   * Tells the client a URL-mode elicitation finished
   * (`notifications/elicitation/complete`), so it can retry the request
   * that asked for it. Sent on the session's stream, not the request's: it
   * may be called after the request ended (keep the frame, or call it from
   * the handler of the retry). Only 2025-11-25 sessions have it; elsewhere
   * nothing is sent.
   *
   * @param elicitationId The id of the elicitation (of `frame.elicit`'s URL
   *   mode, or of `urlElicitationRequired`'s error).
   * @returns Whether the notification was handed to the session's stream
   *   (`false` for a version without it, or a closed session). Over HTTP a
   *   client with no GET stream open misses it, unless an event store keeps
   *   it for the stream's next opening.
   *
   * @example
   * ```ts
   * import { defineTool, urlElicitationRequired } from "@anubis/core";
   * const signedIn = new Set<string>();
   * const pay = defineTool({
   *   name: "pay",
   *   handler: (_args, frame) => {
   *     const user = frame.context.sessionId ?? "stdio";
   *     if (signedIn.has(user)) return "paid";
   *     const elicitationId = crypto.randomUUID();
   *     // Your sign-in page calls this once the user is through.
   *     setTimeout(() => void (signedIn.add(user), frame.completeElicitation(elicitationId)), 10);
   *     throw urlElicitationRequired([{ elicitationId, url: "https://example.com/login", message: "Sign in" }]);
   *   },
   * });
   * if (pay.name !== "pay") throw new Error("not defined");
   * ```
   */
  async completeElicitation(elicitationId: string): Promise<boolean> {
    const session = this.#scope.session;
    if (!session?.onMessage || session.closed) return false;
    if (!this.#scope.dialect.serverNotificationMethods.includes(COMPLETE)) return false;
    await session.onMessage(
      { jsonrpc: "2.0", method: COMPLETE, params: { elicitationId } },
      session,
    );
    return true;
  }

  /**
   * Asks the user for input: a real `elicitation/create` request on a legacy
   * session, an `input_required` round in the stateless era.
   *
   * An accepted form answer's `content` is checked against `requestedSchema`:
   * a stateless answer that does not match is asked again, a legacy one
   * rejects with `-32602`.
   *
   * @param params The elicitation (form or URL mode).
   * @param options The stateless input key.
   * @returns The user's answer.
   *
   * @example
   * ```ts
   * import { defineTool } from "@anubis/core";
   * const book = defineTool({
   *   name: "book",
   *   handler: async (_args, frame) => {
   *     const answer = await frame.elicit({
   *       message: "Which date?",
   *       requestedSchema: {
   *         type: "object",
   *         properties: { date: { type: "string", format: "date" } },
   *         required: ["date"],
   *       },
   *     });
   *     return answer.action === "accept" ? `booked for ${answer.content?.date}` : "not booked";
   *   },
   * });
   * ```
   */
  elicit(params: ElicitParams, options: InputOptions = {}): Promise<ElicitResult> {
    const url = params.mode === "url";
    const feature = url ? "url_elicitation" : "elicitation";
    return this.#input("elicitation/create", params, options, this.#elicits(url), feature, {
      elicitation: url ? { url: {} } : {},
    }, url ? undefined : checkContent) as Promise<ElicitResult>;
  }

  /**
   * Whether {@link elicit} can ask this client: the protocol version has
   * elicitation (in that mode) and the client declared it.
   *
   * @param mode The elicitation mode.
   * @returns `true` when asking will not be refused.
   *
   * @example
   * ```ts
   * import { defineTool } from "@anubis/core";
   * const login = defineTool({
   *   name: "login",
   *   handler: async (_args, frame) => {
   *     if (!frame.canElicit("url")) return "Open https://example.com/login to sign in";
   *     const answer = await frame.elicit({
   *       mode: "url",
   *       message: "Sign in",
   *       url: "https://example.com/login",
   *     });
   *     return answer.action === "accept" ? "signed in" : "not signed in";
   *   },
   * });
   * ```
   */
  canElicit(mode: "form" | "url" = "form"): boolean {
    const url = mode === "url";
    return this.#scope.dialect.supportsFeature(url ? "url_elicitation" : "elicitation") &&
      this.#elicits(url);
  }

  /**
   * Whether {@link sample} can ask this client (it declared sampling).
   *
   * @example
   * ```ts
   * import { defineTool } from "@anubis/core";
   * const title = defineTool({
   *   name: "title",
   *   inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
   *   handler: async ({ text }, frame) => {
   *     if (!frame.canSample()) return text.slice(0, 40);
   *     const reply = await frame.sample({
   *       messages: [{ role: "user", content: { type: "text", text: `A title for: ${text}` } }],
   *       maxTokens: 20,
   *     });
   *     return JSON.stringify(reply.content);
   *   },
   * });
   * ```
   */
  canSample(): boolean {
    return this.#scope.context.clientCapabilities.sampling !== undefined;
  }

  /**
   * Whether {@link listRoots} can ask this client (it declared roots).
   *
   * @example
   * ```ts
   * import { defineTool } from "@anubis/core";
   * const workspace = defineTool({
   *   name: "workspace",
   *   handler: async (_args, frame) => {
   *     if (!frame.canListRoots()) return "no roots";
   *     const { roots } = await frame.listRoots();
   *     return roots.map((root) => root.uri).join("\n");
   *   },
   * });
   * ```
   */
  canListRoots(): boolean {
    return this.#scope.context.clientCapabilities.roots !== undefined;
  }

  #elicits(url: boolean): boolean {
    const caps = this.#scope.context.clientCapabilities.elicitation;
    // `elicitation: {}` declares form mode only.
    return caps !== undefined &&
      (url ? caps.url !== undefined : caps.form !== undefined || caps.url === undefined);
  }

  /**
   * Asks the client to sample its LLM.
   *
   * @param params The sampling request.
   * @param options The stateless input key.
   * @returns The sampled message.
   *
   * @example
   * ```ts
   * import { defineTool } from "@anubis/core";
   * const summarize = defineTool({
   *   name: "summarize",
   *   inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
   *   handler: async ({ text }, frame) => {
   *     const reply = await frame.sample({
   *       messages: [{ role: "user", content: { type: "text", text: `Summarize: ${text}` } }],
   *       maxTokens: 200,
   *     }, { key: "summary" });
   *     const content = reply.content as { type: string; text?: string };
   *     return content.type === "text" ? content.text ?? "" : `(${content.type} from ${reply.model})`;
   *   },
   * });
   * ```
   */
  sample(params: CreateMessageParams, options: InputOptions = {}): Promise<CreateMessageResult> {
    return this.#input("sampling/createMessage", params, options, this.canSample(), undefined, {
      sampling: {},
    }) as Promise<CreateMessageResult>;
  }

  /**
   * Asks the client for its roots.
   *
   * @param options The stateless input key.
   * @returns The roots.
   *
   * @example
   * ```ts
   * import { defineTool } from "@anubis/core";
   * const files = defineTool({
   *   name: "list_roots",
   *   handler: async (_args, frame) => {
   *     const { roots } = await frame.listRoots();
   *     return roots.map((root) => `${root.name ?? "(unnamed)"}: ${root.uri}`).join("\n");
   *   },
   * });
   * ```
   */
  listRoots(options: InputOptions = {}): Promise<ListRootsResult> {
    return this.#input("roots/list", {}, options, this.canListRoots(), undefined, {
      roots: {},
    }) as Promise<ListRootsResult>;
  }

  #input(
    method: string,
    params: Record<string, unknown>,
    options: InputOptions,
    declared: boolean,
    feature: "elicitation" | "url_elicitation" | undefined,
    required: ClientCapabilities,
    check?: AnswerCheck,
  ): Promise<unknown> {
    const { dialect } = this.#scope;
    const index = ++this.#inputCount;
    if (feature && !dialect.supportsFeature(feature)) {
      return Promise.reject(
        new McpError(
          ErrorCode.INVALID_REQUEST,
          `${method} is not part of protocol ${dialect.version}`,
        ),
      );
    }
    const inputs = this.#scope.inputs;
    if (!inputs && !this.#scope.request) {
      return Promise.reject(
        new McpError(
          ErrorCode.INTERNAL_ERROR,
          `${method} input can only be asked while serving tools/call, prompts/get or resources/read`,
        ),
      );
    }
    if (!declared) {
      // The stateless era has its own error code for a missing client capability.
      const code = inputs
        ? ErrorCode.MISSING_REQUIRED_CLIENT_CAPABILITY
        : ErrorCode.INVALID_REQUEST;
      return Promise.reject(
        new McpError(code, `The client did not declare the capability ${method} needs`, {
          requiredCapabilities: required,
        }),
      );
    }
    if (!inputs) {
      const asked = this.#scope.request!(
        method,
        dialect.encodeServerRequest(method, params),
        this.signal,
      );
      if (!check) return asked;
      // Legacy: the answer cannot be asked again, so bad data is an error.
      return asked.then(async (answer) => {
        const checked = await check(params, answer);
        if (checked.ok) return answer;
        throw new McpError(
          ErrorCode.INVALID_PARAMS,
          `Invalid ${method} content from the client: ${checked.message}`,
        );
      });
    }
    const key = options.key ?? `${KEY_PREFIX[method]}_${index}`;
    const answer = inputs.answers[key];
    const schema = dialect.requestResultSchema(method);
    const park = (): Promise<never> => {
      inputs.need(key, method, dialect.encodeServerRequest(method, params));
      // The handler is parked: the engine answers `input_required` and the
      // client retries the whole request with the answers.
      return new Promise(() => {});
    };
    const use = (checked: Validation): Promise<unknown> => {
      if (!checked.ok) return park();
      inputs.used.add(key);
      return Promise.resolve(answer);
    };
    if (answer === undefined || (schema && !s.validate(schema, answer).ok)) return park();
    // Stateless: an answer that fails the check is asked again, like an invalid one.
    const checked = check?.(params, answer) ?? ACCEPTED;
    return checked instanceof Promise ? checked.then(use) : use(checked);
  }
}
