/**
 * Answering a POSTed request: with JSON when the result comes first, or
 * upgraded to an SSE stream as soon as the request emits something
 * (progress, logs, a server-to-client request, a listen acknowledgement)
 * before its result.
 *
 * @module
 */

import { ErrorCode, logger } from "@anubis/core";
import type { JsonRpcMessage } from "@anubis/core/engine";
import { encodeForHttp, notSent } from "./outbound.ts";
import { errorResponseOf, jsonTextResponse } from "./responses.ts";
import { encodeSseMessage } from "./sse.ts";
import type { PostStream } from "./post_stream.ts";
import { SseStream } from "./sse_stream.ts";

/**
 * What a request's work produced: the body (a response or a batch of them)
 * with its status, or `undefined` for nothing to say.
 *
 * @example
 * ```ts
 * import type { Outcome } from "./respond.ts";
 * const outcome: Outcome = { body: { jsonrpc: "2.0", id: 1, result: {} }, status: 200 };
 * ```
 */
export type Outcome =
  | { body: JsonRpcMessage | readonly JsonRpcMessage[]; status: number }
  | undefined;

/**
 * Options of {@link respond}.
 *
 * @example
 * ```ts
 * import type { RespondOptions } from "./respond.ts";
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
  inflight?: { add(cancel: () => void): unknown; delete(cancel: () => void): unknown };
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
 * import type { ResponseControls } from "./respond.ts";
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
 * Runs a request's work and answers it.
 *
 * @param run The work; gets the {@link ResponseControls} to spread into its exchange.
 * @param options Streaming, recording and cancellation.
 * @returns The response: JSON, SSE, or `202` when the work had nothing to say.
 *
 * @example
 * ```ts
 * import { respond } from "./respond.ts";
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
  let resolve!: (response: Response) => void;
  const promise = new Promise<Response>((r) => (resolve = r));
  let controller: AbortController | undefined;
  let cancelled = false;
  let stream: SseStream | undefined;
  let recorded: PostStream | undefined;
  let finished = false;
  const cancel = () => {
    // A shutdown or a cancelled stream after the work finished changes nothing.
    if (finished || cancelled) return;
    cancelled = true;
    controller?.abort();
  };
  const lazySignal = (): AbortSignal => {
    if (controller) return controller.signal;
    controller = new AbortController();
    const disconnect = options.cancelOnDisconnect ? options.request?.signal : undefined;
    if (cancelled || disconnect?.aborted) controller.abort();
    else disconnect?.addEventListener("abort", cancel, { once: true });
    return controller.signal;
  };
  options.inflight?.add(cancel);
  const abandoned = options.abandoned;
  let abandon: (() => void) | undefined;
  let upgradeTimer: ReturnType<typeof setTimeout> | undefined;
  if (abandoned) {
    abandon = () => {
      if (!finished) abandoned.cancel();
    };
    abandoned.requestSignal().addEventListener("abort", abandon, { once: true });
    if (abandoned.upgradeAfterMs > 0) {
      upgradeTimer = setTimeout(() => stream ??= upgrade(), abandoned.upgradeAfterMs);
    }
  }
  const upgrade = (): SseStream => {
    clearTimeout(upgradeTimer);
    recorded = options.recorded?.();
    const opened = recorded?.body ?? new SseStream({ keepAliveMs: options.keepAliveMs });
    if (abandon) opened.signal.addEventListener("abort", abandon, { once: true });
    if (options.cancelOnDisconnect) opened.signal.addEventListener("abort", cancel, { once: true });
    resolve(opened.response(options.headers));
    return opened;
  };
  const emit = (message: JsonRpcMessage): Promise<void> => {
    if (finished) return Promise.resolve();
    const text = encodeForHttp(message);
    if (text === undefined) return notSent(message);
    stream ??= upgrade();
    if (recorded) return recorded.send(text);
    stream.write(encodeSseMessage(text));
    return Promise.resolve();
  };
  const closeStream = (): boolean => {
    if (finished) return false;
    stream ??= upgrade();
    recorded!.closeConnection();
    return true;
  };
  const settle = (outcome: Outcome) => {
    finished = true;
    clearTimeout(upgradeTimer);
    options.inflight?.delete(cancel);
    try {
      // A response JSON cannot encode goes out as -32603 for its id.
      const text = outcome && encodeForHttp(outcome.body);
      if (recorded) {
        if (text !== undefined) recorded.send(text, true);
        else recorded.end();
      } else if (stream) {
        if (text !== undefined) stream.write(encodeSseMessage(text));
        stream.close();
      } else if (text !== undefined) {
        resolve(jsonTextResponse(text, outcome!.status, options.headers));
      } else {
        resolve(new Response(null, { status: 202, headers: options.headers }));
      }
    } catch (error) {
      // Whatever failed, the request is answered (settle runs in a promise
      // callback: a throw here would be an unhandled rejection).
      logger.error("request.failed", "answering a request failed", { error });
      stream?.close();
      const body = outcome?.body;
      const id = body && !Array.isArray(body) && "id" in body ? body.id : null;
      resolve(errorResponseOf(500, id, ErrorCode.INTERNAL_ERROR, "Internal error"));
    }
  };
  run({ emit, lazySignal, closeStream: options.recorded ? closeStream : undefined }).then(
    settle,
    (error) => {
      logger.error("request.failed", "request failed", { error });
      settle(undefined);
    },
  );
  return promise;
}
