/**
 * Builds the frame of a legacy-era request: session assigns, the session's
 * client facts, and real server-to-client requests.
 *
 * @module
 */

import type { Cancellation } from "../cancellation.ts";
import { emitter, type Exchange } from "../exchange.ts";
import { EMPTY } from "../_objects.ts";
import { EngineFrameContext, Frame } from "../frame.ts";
import type { JsonRpcMessage, JsonRpcRequest, RequestId } from "../json_rpc.ts";
import { MetaKey } from "../meta.ts";
import type { McpServer } from "../server.ts";
import type { Session } from "./session.ts";
import type { ClientCapabilities, Implementation } from "../types.ts";

/** A request's middleware assigns join its session's (every request does, with or without a frame). */
export function adoptAssigns(session: Session, exchange: Exchange): void {
  if (exchange.assigns) Object.assign(session.assigns.value, exchange.assigns);
}

/**
 * The task a legacy frame runs in: its messages carry the related-task
 * `_meta`, and `ask` wraps each request to the client (the task waits for
 * input meanwhile).
 */
export interface FrameTask {
  /** The task id. */
  id: string;
  /** Runs one server-to-client request of the task. */
  ask<T>(send: () => Promise<T>): Promise<T>;
}

/**
 * What {@link legacyFrame} makes a frame from, besides the server (the
 * engine's record of the call is one, so none is made per request).
 */
export interface LegacyFrameOptions {
  /** The session (initialized, or being initialized). */
  readonly session: Session;
  /** The request's surroundings. */
  readonly exchange: Exchange;
  /** The method served, when it is not the request's (a notification's, `session/restore`). */
  readonly method?: string;
  /** The request, or `undefined` for a notification or a session restore. */
  readonly request: JsonRpcRequest | undefined;
  /** The request's cancellation (`NEVER` when it cannot be cancelled). */
  readonly cancellation: Cancellation;
  /** The task the request runs as, if any. */
  readonly task?: FrameTask;
}

/** The frame of one legacy request (or notification) of a session. */
export function legacyFrame(server: McpServer, options: LegacyFrameOptions): Frame {
  const { session, exchange, task } = options;
  adoptAssigns(session, exchange);
  const dialect = session.dialect!;
  const emit = task ? relatedTo(task.id, emitter(exchange, session)) : emitter(exchange, session);
  const timeout = server.definition.clientRequestTimeoutMs ?? 60_000;
  const context = new LegacyFrameContext(options);
  return new Frame({
    context,
    dialect,
    notify: server.notify,
    assigns: session.assigns,
    emit,
    logLevel: () => session.logLevel ?? "debug",
    canLog: server.capabilities.logging !== undefined,
    request: task
      ? (m, p, sig) => task.ask(() => session.request(m, p, emit, sig, timeout))
      : (m, p, sig) => session.request(m, p, emit, sig, timeout),
    closeStream: exchange.closeStream,
    session,
  });
}

/** Tags every request and notification sent with the related-task `_meta`. */
/** A legacy request's facts: its session's. */
class LegacyFrameContext extends EngineFrameContext {
  readonly era = "legacy";
  readonly protocolVersion: string;
  readonly sessionId?: string;
  readonly clientInfo: Partial<Implementation>;
  readonly clientCapabilities: ClientCapabilities;
  readonly initialized: boolean;
  readonly method: string;
  readonly requestId?: RequestId;
  readonly meta: Readonly<Record<string, unknown>>;

  constructor(options: LegacyFrameOptions) {
    super(options.exchange, options.cancellation);
    const { session, request } = options;
    this.protocolVersion = session.dialect!.version;
    this.sessionId = session.id;
    this.clientInfo = session.clientInfo;
    this.clientCapabilities = session.clientCapabilities;
    this.initialized = session.initialized;
    this.method = options.method ?? request!.method;
    this.requestId = request?.id;
    this.meta = (request?.params?._meta ?? EMPTY) as Record<string, unknown>;
  }
}

function relatedTo(
  taskId: string,
  emit: (message: JsonRpcMessage) => Promise<void>,
): (message: JsonRpcMessage) => Promise<void> {
  return (message) => {
    if (!("method" in message)) return emit(message);
    const params = message.params ?? {};
    const _meta = { ...(params._meta as object | undefined), [MetaKey.relatedTask]: { taskId } };
    return emit({ ...message, params: { ...params, _meta } } as JsonRpcMessage);
  };
}
