/**
 * Retrying KV work that failed only because another writer held the database.
 *
 * @module
 */

/**
 * Whether an error is SQLite's "database is locked" (another process is
 * committing to the same file): the work did not happen and may be retried.
 *
 * @param error The error.
 * @returns `true` for a lock error.
 *
 * @example
 * ```ts
 * import { isLockedError } from "@anubis/core/kv";
 * import assert from "node:assert/strict";
 * assert.equal(isLockedError(new TypeError("database is locked")), true);
 * ```
 */
export function isLockedError(error: unknown): boolean {
  const message = error instanceof Error ? error.message : String(error);
  return /database is locked|database is busy|SQLITE_BUSY/i.test(message);
}

/**
 * Waits before attempt `attempt` (0-based): full jitter on an exponential
 * step capped at 50 ms, so contending processes spread out.
 *
 * @param attempt How many attempts failed so far.
 * @returns When to try again.
 *
 * @example
 * ```ts
 * import { backoff } from "@anubis/core/kv";
 * await backoff(0);
 * ```
 */
export function backoff(attempt: number): Promise<void> {
  const cap = Math.min(50, 2 ** Math.min(attempt, 6));
  return new Promise((resolve) => setTimeout(resolve, Math.random() * cap));
}

/**
 * Runs `work`, retrying while it throws a lock error, until `timeoutMs` has
 * passed; then the last error is thrown (stores fail closed).
 *
 * @param work The KV call.
 * @param timeoutMs How long to keep retrying (default 10 s).
 * @returns What `work` returned.
 *
 * @example
 * ```ts
 * import { retryLocked } from "@anubis/core/kv";
 * import assert from "node:assert/strict";
 * let calls = 0;
 * const value = await retryLocked(() => {
 *   if (++calls < 3) throw new TypeError("database is locked");
 *   return Promise.resolve("done");
 * });
 * assert.equal(value, "done");
 * assert.equal(calls, 3);
 * ```
 */
export async function retryLocked<T>(work: () => Promise<T>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (let attempt = 0;; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (!isLockedError(error) || Date.now() >= deadline) throw error;
      await backoff(attempt);
    }
  }
}
