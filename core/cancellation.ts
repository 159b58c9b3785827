/**
 * The cancellation of one request, with its `AbortSignal` made only when
 * something reads it: a quick handler that never looks at `frame.signal`
 * costs no `AbortController` and no listeners.
 *
 * @module
 */

/**
 * A request's cancellation. It is aborted by {@link abort} (the engine),
 * {@link cancel} (a client's `notifications/cancelled`, a closing session),
 * or by the transport's signals it links. The `AbortSignal` and the links to
 * the transport's signals are made on the first read of {@link signal}.
 *
 * @example
 * ```ts
 * import { Cancellation } from "@anubis/core/engine";
 * import assert from "node:assert/strict";
 * const transport = new AbortController();
 * const cancellation = new Cancellation({ linked: transport.signal });
 * transport.abort();
 * assert.equal(cancellation.aborted, true);
 * assert.equal(cancellation.signal.aborted, true);
 * cancellation.dispose();
 * ```
 */
export class Cancellation {
  #controller: AbortController | undefined;
  #aborted = false;
  #reason: unknown;
  readonly #linked: AbortSignal | undefined;
  readonly #lazy: (() => AbortSignal) | undefined;
  readonly #keepReasons: boolean;
  #unlink: (() => void) | undefined;

  /**
   * Creates the instance.
   *
   * @param options The transport's signals and how cancel reasons are kept.
   */
  constructor(options: CancellationOptions = {}) {
    this.#linked = options.linked;
    this.#lazy = options.lazy;
    this.#keepReasons = options.keepReasons ?? false;
  }

  /**
   * Whether the request was cancelled (without making the signal).
   *
   * @example
   * ```ts
   * import { Cancellation } from "@anubis/core/engine";
   * import assert from "node:assert/strict";
   * const cancellation = new Cancellation();
   * assert.equal(cancellation.aborted, false);
   * cancellation.abort();
   * assert.equal(cancellation.aborted, true);
   * ```
   */
  get aborted(): boolean {
    if (this.#aborted) return true;
    if (this.#controller) return this.#controller.signal.aborted;
    return this.#linked?.aborted === true;
  }

  /**
   * The request's signal, made (and linked to the transport's signals) on first read.
   *
   * @example
   * ```ts
   * import { Cancellation } from "@anubis/core/engine";
   * import assert from "node:assert/strict";
   * const cancellation = new Cancellation();
   * let stopped = false;
   * cancellation.signal.addEventListener("abort", () => stopped = true);
   * cancellation.abort();
   * assert.equal(stopped, true);
   * assert.equal(cancellation.signal.aborted, true);
   * cancellation.dispose();
   * ```
   */
  get signal(): AbortSignal {
    return this.#controller?.signal ?? this.#materialize();
  }

  /**
   * Makes the signal now, linking the transport's lazy one, so that
   * {@link aborted} also sees what the transport reports only through it:
   * an HTTP client that went away (Deno aborts a request signal made after
   * the disconnect a moment later, not at once). For the few decisions a
   * cancelled request must not get wrong, such as parking a handler for
   * input; a request that never comes to one pays nothing.
   *
   * @example
   * ```ts
   * import { Cancellation } from "@anubis/core/engine";
   * import assert from "node:assert/strict";
   * const transport = new AbortController();
   * const cancellation = new Cancellation({ lazy: () => transport.signal });
   * transport.abort();
   * assert.equal(cancellation.aborted, false); // the lazy signal is not read yet
   * cancellation.watch();
   * assert.equal(cancellation.aborted, true);
   * cancellation.dispose();
   * ```
   */
  watch(): void {
    if (!this.#controller) this.#materialize();
  }

  /**
   * Aborts the request.
   *
   * @param reason The signal's reason.
   *
   * @example
   * ```ts
   * import { Cancellation } from "@anubis/core/engine";
   * import assert from "node:assert/strict";
   * const cancellation = new Cancellation();
   * cancellation.abort("server shutting down");
   * assert.equal(cancellation.signal.reason, "server shutting down");
   * ```
   */
  abort(reason?: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    this.#controller?.abort(reason);
  }

  /**
   * Cancels the request from outside (a client's `notifications/cancelled`,
   * a closing session); the reason reaches the signal when `keepReasons`.
   *
   * @param reason Why.
   *
   * @example
   * ```ts
   * import { Cancellation } from "@anubis/core/engine";
   * import assert from "node:assert/strict";
   * const kept = new Cancellation({ keepReasons: true });
   * kept.cancel("client gave up");
   * assert.equal(kept.signal.reason, "client gave up");
   * const plain = new Cancellation();
   * plain.cancel("client gave up");
   * assert.equal(plain.signal.reason.name, "AbortError");
   * ```
   */
  cancel(reason: string): void {
    this.abort(this.#keepReasons ? reason : undefined);
  }

  /**
   * Removes the listeners on the transport's signals once the request is over.
   *
   * @example
   * ```ts
   * import { Cancellation } from "@anubis/core/engine";
   * import assert from "node:assert/strict";
   * const transport = new AbortController();
   * const cancellation = new Cancellation({ linked: transport.signal });
   * assert.equal(cancellation.signal.aborted, false); // the signal is linked now
   * cancellation.dispose();
   * transport.abort();
   * assert.equal(cancellation.signal.aborted, false); // no longer linked
   * ```
   */
  dispose(): void {
    this.#unlink?.();
    this.#unlink = undefined;
  }

  #materialize(): AbortSignal {
    const controller = this.#controller = new AbortController();
    if (this.#aborted) {
      controller.abort(this.#reason);
      return controller.signal;
    }
    const onAbort = () => controller.abort();
    const sources = [this.#linked, this.#lazy?.()];
    for (const source of sources) {
      if (!source) continue;
      if (source.aborted) {
        controller.abort();
        break;
      }
      source.addEventListener("abort", onAbort, { once: true });
    }
    this.#unlink = () => {
      for (const source of sources) source?.removeEventListener("abort", onAbort);
    };
    return controller.signal;
  }
}

/**
 * Options of a {@link Cancellation}.
 *
 * @example
 * ```ts
 * import type { CancellationOptions } from "@anubis/core/engine";
 * const options: CancellationOptions = { keepReasons: true };
 * ```
 */
export interface CancellationOptions {
  /** A transport signal that aborts the request (read eagerly for `aborted`). */
  linked?: AbortSignal;
  /** A transport signal asked for only when the request's signal is first read. */
  lazy?: () => AbortSignal;
  /** Whether {@link Cancellation.cancel}'s reason becomes the signal's reason. */
  keepReasons?: boolean;
}
