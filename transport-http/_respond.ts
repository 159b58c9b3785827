/**
 * Answering a POSTed request: with JSON when the result comes first, or
 * upgraded to an SSE stream as soon as the request emits something
 * (progress, logs, a server-to-client request, a listen acknowledgement)
 * before its result.
 *
 * @module
 */

import { ErrorCode, logger } from "@anubis/core";
import type { Exchange, JsonRpcMessage } from "@anubis/core/engine";
import { encodeForHttp, notSent } from "./_outbound.ts";
import { errorResponseOf, jsonTextResponse } from "./_json_responses.ts";
import { encodeSseMessage } from "./_sse_encoding.ts";
import type { PostStream } from "./legacy/_post_stream.ts";
import { SseStream } from "./_sse_stream.ts";

/**
 * What a request's work produced: the body (a response or a batch of them)
 * with its status, or `undefined` for nothing to say.
 *
 * @example
 * ```ts
 * import type { Outcome } from "./_respond.ts";
 * const outcome: Outcome = { body: { jsonrpc: "2.0", id: 1, result: {} }, status: 200 };
 * ```
 */
export type Outcome =
  | { body: JsonRpcMessage | readonly JsonRpcMessage[]; status: number }
  | undefined;

/**
 * Work in flight that a shutdown cancels (what {@link RespondOptions.inflight} holds).
 *
 * @example
 * ```ts
 * import type { Cancelable } from "./_respond.ts";
 * const all = new Set<Cancelable>();
 * const shutdown = () => all.forEach((work) => work.cancel());
 * ```
 */
export interface Cancelable {
  /** Cancels the work (nothing once it finished). */
  cancel(): void;
}

/**
 * Options of {@link respond}.
 *
 * @example
 * ```ts
 * import type { RespondOptions } from "./_respond.ts";
 * const options: RespondOptions = { keepAliveMs: 15_000, cancelOnDisconnect: true };
 * ```
 */
export interface RespondOptions {
  /** Keep-alive comment interval on an upgraded stream (0: none). */
  keepAliveMs: number;
  /**
   * Stateless era: the client going away (the request's signal, or the SSE
   * stream cancelled) cancels the work. Legacy: it does not.
   */
  cancelOnDisconnect: boolean;
  /**
   * The request, whose signal fires on disconnect (and on Deno also after a
   * completed response). Its signal is read only when the work first asks for
   * its own, because reading `request.signal` is costly on Deno and quick
   * requests never need it.
   */
  request?: { readonly signal: AbortSignal };
  /**
   * Holds the work's cancel function while it runs (a shutdown cancels every
   * one): a `Set`, or anything with its `add` and `delete`.
   */
  inflight?: { add(work: Cancelable): unknown; delete(work: Cancelable): unknown };
  /**
   * Opens a recorded, resumable stream when the response upgrades to SSE
   * (legacy 2025-11-25 with an event store); the work may then close the
   * connection early (`closeStream`).
   */
  recorded?: () => PostStream;
  /** Extra response headers. */
  headers?: Record<string, string>;
  /**
   * Legacy batches: work nobody can receive once the client leaves. `cancel`
   * runs when the request's signal aborts or an upgraded stream is cancelled
   * before the work finished. On Deno the request's signal fires for a client
   * that left only while its connection is still read (small bodies), so work
   * still running after `upgradeAfterMs` (when > 0) upgrades the answer to
   * SSE, whose keep-alive comments fail once the client is gone.
   */
  abandoned?: { requestSignal: () => AbortSignal; upgradeAfterMs: number; cancel: () => void };
}

/**
 * What a request's work gets to answer through: the fields of the engine's
 * `Exchange` a transport fills per request.
 *
 * @example
 * ```ts
 * import type { ResponseControls } from "./_respond.ts";
 * const quiet = (controls: ResponseControls) => controls.lazySignal().aborted;
 * ```
 */
export interface ResponseControls {
  /** Sends a related message (upgrades the response to SSE). */
  emit: (message: JsonRpcMessage) => Promise<void>;
  /**
   * The work's signal, made on the first call (most requests never ask):
   * aborts on shutdown and, in the stateless era, when the client goes away
   * (the request's signal, or an upgraded stream cancelled).
   */
  lazySignal: () => AbortSignal;
  /** Closes the SSE connection early for polling (recorded streams only). */
  closeStream?: () => boolean;
}

/**
 * Gives a request's own exchange the controls of its answer: assigned, not
 * spread into a copy, since the transport makes the exchange per request.
 *
 * @param exchange The request's exchange.
 * @param controls The controls {@link respond} gave the work.
 * @returns The exchange.
 *
 * @example
 * ```ts
 * import { joinControls } from "./_respond.ts";
 * import assert from "node:assert/strict";
 * const controls = { emit: () => Promise.resolve(), lazySignal: () => AbortSignal.abort() };
 * const exchange = joinControls({ transport: "http" }, controls);
 * assert.equal(exchange.emit, controls.emit);
 * assert.equal(exchange.lazySignal, controls.lazySignal);
 * assert.equal("closeStream" in exchange, false); // only for recorded streams
 * ```
 */
export function joinControls(exchange: Exchange, controls: ResponseControls): Exchange {
  exchange.emit = controls.emit;
  exchange.lazySignal = controls.lazySignal;
  if (controls.closeStream) exchange.closeStream = controls.closeStream;
  return exchange;
}

/**
 * Runs a request's work and answers it.
 *
 * @param run The work; gets the {@link ResponseControls} for its exchange (see {@link joinControls}).
 * @param options Streaming, recording and cancellation.
 * @returns The response: JSON, SSE, or `202` when the work had nothing to say.
 *
 * @example
 * ```ts
 * import { respond } from "./_respond.ts";
 * import assert from "node:assert/strict";
 * const response = await respond(async ({ emit }) => {
 *   await emit({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: 1, progress: 1 } });
 *   return { body: { jsonrpc: "2.0", id: 1, result: {} }, status: 200 };
 * }, { keepAliveMs: 0, cancelOnDisconnect: false });
 * assert.equal(response.headers.get("content-type"), "text/event-stream");
 * assert.equal((await response.text()).split("event: message").length - 1, 2);
 * ```
 */
export function respond(
  run: (controls: ResponseControls) => Promise<Outcome>,
  options: RespondOptions,
): Promise<Response> {
  const answer = new Answer(options);
  options.inflight?.add(answer);
  run(answer).then(answer.settled, answer.failed);
  return answer.promise;
}

/**
 * One request's answer, and the {@link ResponseControls} its work gets: its
 * state in fields, and as functions only what is handed out as one (the
 * controls, the work's continuations). It cancels the work as an
 * `EventListener` object and as an `inflight` entry, so a request that never
 * asks for its signal costs no cancel closure.
 */
class Answer implements ResponseControls {
  readonly promise: Promise<Response>;
  readonly #options: RespondOptions;
  #resolve!: (response: Response) => void;
  #controller: AbortController | undefined;
  #cancelled = false;
  #stream: SseStream | undefined;
  #recorded: PostStream | undefined;
  #finished = false;
  #abandon: (() => void) | undefined;
  #upgradeTimer: ReturnType<typeof setTimeout> | undefined;
  readonly closeStream: (() => boolean) | undefined;

  constructor(options: RespondOptions) {
    this.#options = options;
    this.promise = new Promise<Response>((resolve) => (this.#resolve = resolve));
    if (options.recorded) this.closeStream = () => this.#closeStream();
    const abandoned = options.abandoned;
    if (abandoned) {
      const abandon = this.#abandon = () => {
        if (!this.#finished) abandoned.cancel();
      };
      abandoned.requestSignal().addEventListener("abort", abandon, { once: true });
      if (abandoned.upgradeAfterMs > 0) {
        this.#upgradeTimer = setTimeout(
          () => this.#stream ??= this.#upgrade(),
          abandoned.upgradeAfterMs,
        );
      }
    }
  }

  /** Cancels the work (a shutdown, or the client gone); once it finished, nothing. */
  cancel(): void {
    if (this.#finished || this.#cancelled) return;
    this.#cancelled = true;
    this.#controller?.abort();
  }

  /** As an `EventListener`: the request's signal or the upgraded stream aborted. */
  handleEvent(): void {
    this.cancel();
  }

  readonly lazySignal = (): AbortSignal => {
    if (this.#controller) return this.#controller.signal;
    const controller = this.#controller = new AbortController();
    const options = this.#options;
    const disconnect = options.cancelOnDisconnect ? options.request?.signal : undefined;
    if (this.#cancelled || disconnect?.aborted) controller.abort();
    else disconnect?.addEventListener("abort", this, { once: true });
    return controller.signal;
  };

  readonly emit = (message: JsonRpcMessage): Promise<void> => {
    if (this.#finished) return Promise.resolve();
    const text = encodeForHttp(message);
    if (text === undefined) return notSent(message);
    const stream = this.#stream ??= this.#upgrade();
    if (this.#recorded) return this.#recorded.send(text);
    stream.write(encodeSseMessage(text));
    return Promise.resolve();
  };

  #closeStream(): boolean {
    if (this.#finished) return false;
    this.#stream ??= this.#upgrade();
    this.#recorded!.closeConnection();
    return true;
  }

  #upgrade(): SseStream {
    clearTimeout(this.#upgradeTimer);
    const options = this.#options;
    const recorded = this.#recorded = options.recorded?.();
    const opened = recorded?.body ?? new SseStream({ keepAliveMs: options.keepAliveMs });
    if (this.#abandon) opened.signal.addEventListener("abort", this.#abandon, { once: true });
    if (options.cancelOnDisconnect) opened.signal.addEventListener("abort", this, { once: true });
    this.#resolve(opened.response(options.headers));
    return opened;
  }

  readonly settled = (outcome: Outcome): void => {
    this.#finished = true;
    const options = this.#options;
    if (this.#upgradeTimer !== undefined) clearTimeout(this.#upgradeTimer);
    options.inflight?.delete(this);
    const stream = this.#stream;
    try {
      // A response JSON cannot encode goes out as -32603 for its id.
      const text = outcome && encodeForHttp(outcome.body);
      const recorded = this.#recorded;
      if (recorded) {
        if (text !== undefined) recorded.send(text, true);
        else recorded.end();
      } else if (stream) {
        if (text !== undefined) stream.write(encodeSseMessage(text));
        stream.close();
      } else if (text !== undefined) {
        this.#resolve(jsonTextResponse(text, outcome!.status, options.headers));
      } else {
        this.#resolve(new Response(null, { status: 202, headers: options.headers }));
      }
    } catch (error) {
      // Whatever failed, the request is answered (settle runs in a promise
      // callback: a throw here would be an unhandled rejection).
      logger.error("request.failed", "answering a request failed", { error });
      stream?.close();
      const body = outcome?.body;
      const id = body && !Array.isArray(body) && "id" in body ? body.id : null;
      this.#resolve(errorResponseOf(500, id, ErrorCode.INTERNAL_ERROR, "Internal error"));
    }
  };

  readonly failed = (error: unknown): void => {
    logger.error("request.failed", "request failed", { error });
    this.settled(undefined);
  };
}
