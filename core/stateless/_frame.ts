/**
 * Builds the frame of a stateless-era request: the facts its `_meta` carries,
 * its own assigns, and multi round-trip input.
 *
 * @module
 */

import type { Cancellation } from "../cancellation.ts";
import type { Dialect } from "../dialect.ts";
import type { Exchange } from "../exchange.ts";
import { EngineFrameContext, Frame, type FrameScope, type InputCollector } from "../frame.ts";
import type { JsonRpcMessage, JsonRpcRequest, RequestId } from "../json_rpc.ts";
import { MetaKey } from "../meta.ts";
import type { Notifier } from "../notifier.ts";
import type { McpServer } from "../server.ts";
import type { ClientCapabilities, Implementation } from "../types.ts";

/**
 * What a frame of the tasks extension adds: the task's way to ask the client
 * (a task's frame), or the start of a task (a request's frame).
 */
export type TaskHooks = Pick<FrameScope, "request" | "startTask">;

/**
 * What {@link statelessFrame} makes a frame from, besides the server (the
 * engine's record of the call is one, so none is made per request).
 */
export interface StatelessFrameOptions {
  /** The request's dialect. */
  readonly dialect: Dialect;
  /** The request, its `_meta` validated. */
  readonly request: JsonRpcRequest;
  /** The request's surroundings. */
  readonly exchange: Exchange;
  /** The request's cancellation. */
  readonly cancellation: Cancellation;
  /** Where the handler's input requests gather, for a method that may ask. */
  readonly inputs: InputCollector | undefined;
  /** A task's way of asking and of becoming one, if any. */
  readonly hooks: TaskHooks | undefined;
}

/** The frame of one stateless request, whose `_meta` the engine validated. */
export function statelessFrame(server: McpServer, options: StatelessFrameOptions): Frame {
  return new Frame(new StatelessScope(new StatelessFrameContext(options), server, options));
}

/** A stateless request's facts: its `_meta`'s. */
class StatelessFrameContext extends EngineFrameContext {
  readonly era = "stateless";
  readonly protocolVersion: string;
  readonly sessionId?: string;
  readonly clientInfo: Partial<Implementation>;
  readonly clientCapabilities: ClientCapabilities;
  readonly initialized = true;
  readonly method: string;
  readonly requestId: RequestId;
  readonly meta: Readonly<Record<string, unknown>>;

  constructor(options: StatelessFrameOptions) {
    super(options.exchange, options.cancellation);
    const { request } = options;
    const meta = request.params!._meta as Record<string, unknown>;
    this.protocolVersion = options.dialect.version;
    this.clientInfo = (meta[MetaKey.clientInfo] ?? {}) as Partial<Implementation>;
    this.clientCapabilities = meta[MetaKey.clientCapabilities] as ClientCapabilities;
    this.method = request.method;
    this.requestId = request.id;
    this.meta = meta;
  }
}

const SENT: Promise<void> = Promise.resolve();

/**
 * A stateless frame's scope, one object per request: it also holds the
 * request's own assigns (a copy of the middleware's, made on first read) and
 * sends through the exchange's `emit` only when something is sent, so a
 * request costs no assigns holder and no send closure of its own. What is
 * seldom read (the notifier, the logging capability) is read through the server.
 */
class StatelessScope implements FrameScope {
  readonly context: EngineFrameContext;
  readonly dialect: Dialect;
  readonly inputs: InputCollector | undefined;
  readonly request: TaskHooks["request"];
  // Cleared once used: one task per request (`Frame.runAsTask`).
  startTask: TaskHooks["startTask"];
  readonly #server: McpServer;
  readonly #exchange: Exchange;
  #assigns: Record<string, unknown> | undefined;

  constructor(context: EngineFrameContext, server: McpServer, options: StatelessFrameOptions) {
    const task = options.hooks;
    this.context = context;
    this.dialect = options.dialect;
    this.inputs = options.inputs;
    this.request = task?.request;
    this.startTask = task?.startTask;
    this.#server = server;
    this.#exchange = options.exchange;
  }

  get notify(): Notifier {
    return this.#server.notify;
  }

  get canLog(): boolean {
    return this.#server.capabilities.logging !== undefined;
  }

  /** The holder of the assigns is the scope itself. */
  get assigns(): { value: Record<string, unknown> } {
    return this;
  }

  /** The request's assigns: the middleware's (the context's), copied on first read. */
  get value(): Record<string, unknown> {
    return this.#assigns ??= { ...this.context.assigns };
  }
  set value(value: Record<string, unknown>) {
    this.#assigns = value;
  }

  /** Sends to the exchange (nowhere when it has no `emit`, as for a task's frame). */
  emit(message: JsonRpcMessage): Promise<void> {
    const emit = this.#exchange.emit;
    return emit ? Promise.resolve(emit(message)) : SENT;
  }
}
