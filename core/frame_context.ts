/**
 * The engine's {@link FrameContext}: the request's facts, with its signal
 * made only when a handler reads it.
 *
 * @module
 */

import type { Cancellation } from "./cancellation.ts";
import type { FrameContext } from "./frame.ts";
import type { RequestId } from "./json_rpc.ts";
import type { ClientCapabilities, Era, Implementation } from "./types.ts";

/** Shared by every request that has no headers or assigns; read-only on the frame. */
export const EMPTY: Readonly<Record<string, never>> = Object.freeze({});

/** The facts of one request, as the engine gathers them (see {@link FrameContext}). */
export type ContextFacts =
  & Omit<FrameContext, "signal" | "headers" | "assigns">
  & Partial<Pick<FrameContext, "headers" | "assigns">>;

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

  constructor(facts: ContextFacts, cancellation: Cancellation) {
    this.era = facts.era;
    this.protocolVersion = facts.protocolVersion;
    this.sessionId = facts.sessionId;
    this.clientInfo = facts.clientInfo;
    this.clientCapabilities = facts.clientCapabilities;
    this.initialized = facts.initialized;
    this.method = facts.method;
    this.requestId = facts.requestId;
    this.meta = facts.meta;
    this.transport = facts.transport;
    this.headers = facts.headers ?? EMPTY;
    this.assigns = facts.assigns ?? EMPTY;
    this.authInfo = facts.authInfo;
    this.#cancellation = cancellation;
  }

  /** Aborts when the request is cancelled or its client went away. */
  get signal(): AbortSignal {
    return this.#cancellation.signal;
  }
}

/** A stateless request's own assigns: a copy of the middleware's, made on first read. */
export class RequestAssigns {
  #source: Readonly<Record<string, unknown>> | undefined;
  #value: Record<string, unknown> | undefined;

  constructor(source: Readonly<Record<string, unknown>> | undefined) {
    this.#source = source;
  }

  /** The assigns. */
  get value(): Record<string, unknown> {
    return this.#value ??= { ...this.#source };
  }
  set value(value: Record<string, unknown>) {
    this.#value = value;
  }
}
