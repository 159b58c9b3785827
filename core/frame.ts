/**
 * The `Frame`: what every handler receives. User data in `assigns`, the
 * read-only `context` of the request, and request-scoped helpers that work in
 * both eras.
 *
 * @module
 */

import type { Dialect } from "./dialect.ts";
import { ErrorCode, McpError } from "./errors.ts";
import { ACCEPTED, type AnswerCheck, checkContent } from "./elicitation_check.ts";
import type { Validation } from "./json_schema.ts";
import type { JsonRpcMessage, RequestId } from "./json_rpc.ts";
import type { Notifier } from "./notifier.ts";
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
  /** Authentication facts a middleware attached, if any. */
  readonly authInfo?: unknown;
  /** Aborts when the request is cancelled or its client went away. */
  readonly signal: AbortSignal;
}

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
  /** The minimum level this request may log at, or `undefined` for no logs. */
  logLevel(): LogLevel | undefined;
  /** Whether the server declared the logging capability. */
  canLog: boolean;
  /** Sends a real server-to-client request (legacy era). */
  request?(method: string, params: Record<string, unknown>, signal: AbortSignal): Promise<unknown>;
  /** Collects multi round-trip input (stateless era). */
  inputs?: InputCollector;
  /** Closes this request's SSE connection for polling, when the transport can resume it. */
  closeStream?(): boolean;
}

/**
 * Collects the input requests of one stateless round: answers come from the
 * retry, missing ones are gathered and the handler is parked.
 */
export class InputCollector {
  /** Answers by key: those of earlier rounds plus this retry's. */
  readonly answers: Record<string, unknown>;
  // Made on first use: most requests never ask for input.
  #used: Set<string> | undefined;
  #pending: Map<string, { method: string; params: Record<string, unknown> }> | undefined;
  #requested: Promise<void> | undefined;
  #resolve: (() => void) | undefined;
  #wake: (() => void) | undefined;

  /**
   * Creates the instance.
   *
   * @param answers The answers known to this round.
   */
  constructor(answers: Record<string, unknown>) {
    this.answers = answers;
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

const KEY_PREFIX: Record<string, string> = {
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

  /** User data: per session (legacy) or per request (stateless). */
  get assigns(): Record<string, unknown> {
    return this.#scope.assigns.value;
  }
  set assigns(value: Record<string, unknown>) {
    this.#scope.assigns.value = value;
  }

  /** The read-only facts of this request. */
  get context(): FrameContext {
    return this.#scope.context;
  }

  /** Aborts when the request is cancelled. */
  get signal(): AbortSignal {
    return this.#scope.context.signal;
  }

  /** Publishes list changes and resource updates. */
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
   */
  closeStream(): boolean {
    return this.#scope.closeStream?.() ?? false;
  }

  /**
   * Reports progress, when the request asked for it with a `progressToken`.
   *
   * @param progress The progress so far; must increase.
   * @param options The total and a message.
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
   */
  async log(level: LogLevel, data: unknown, logger?: string): Promise<void> {
    const minimum = this.#scope.logLevel();
    if (!this.#scope.canLog || !minimum || this.signal.aborted) return;
    if (LOG_LEVELS.indexOf(level) < LOG_LEVELS.indexOf(minimum)) return;
    // `data` is required on the wire; `undefined` would vanish in JSON.
    const params: Record<string, unknown> = { level, data: data ?? null };
    if (logger !== undefined) params.logger = logger;
    await this.#scope.emit({ jsonrpc: "2.0", method: "notifications/message", params });
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
   */
  canElicit(mode: "form" | "url" = "form"): boolean {
    const url = mode === "url";
    return this.#scope.dialect.supportsFeature(url ? "url_elicitation" : "elicitation") &&
      this.#elicits(url);
  }

  /** Whether {@link sample} can ask this client (it declared sampling). */
  canSample(): boolean {
    return this.#scope.context.clientCapabilities.sampling !== undefined;
  }

  /** Whether {@link listRoots} can ask this client (it declared roots). */
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
