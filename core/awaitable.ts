/**
 * Synchronous while nothing is asynchronous: the engine's hot path passes
 * values on as they are and waits only for what is pending, so a request
 * whose handler answers at once allocates no promise per layer.
 *
 * @module
 */

/**
 * What a handler may return or resolve to.
 *
 * @example
 * ```ts
 * import type { Awaitable } from "@anubis/core";
 * import assert from "node:assert/strict";
 * const now: Awaitable<string> = "at once";
 * const later: Awaitable<string> = Promise.resolve("later");
 * assert.equal(now, "at once");
 * assert.equal(await later, "later");
 * ```
 */
export type Awaitable<T> = T | Promise<T>;

/**
 * Tells whether a value is pending (anything `await` would wait for).
 *
 * @param value A result that may still be pending.
 * @returns `true` for a promise or another thenable.
 */
export function isThenable<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as { then?: unknown } | null | undefined)?.then === "function";
}

/**
 * Applies `next` to a value now, or once it settles when it is pending.
 *
 * @param value A result that may still be pending.
 * @param next What to do with it.
 * @returns `next`'s result, or its promise.
 */
export function andThen<T, R>(
  value: T | PromiseLike<T>,
  next: (value: T) => R | PromiseLike<R>,
): R | Promise<R> {
  return isThenable(value) ? Promise.resolve(value).then(next) : next(value) as R | Promise<R>;
}
