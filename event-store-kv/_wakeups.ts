/**
 * Waiting for "something changed for this key" or a timeout, whichever comes first.
 *
 * @module
 */

/**
 * Per-key wake-ups: tails wait on a session, appends in the same process wake
 * them at once, and the timeout is the poll that catches other processes.
 *
 * @example
 * ```ts
 * import { Wakeups } from "./_wakeups.ts";
 * const wakeups = new Wakeups();
 * setTimeout(() => wakeups.wake("s"), 5);
 * await wakeups.wait("s", 60_000, new AbortController().signal); // returns after ~5 ms
 * ```
 */
export class Wakeups {
  readonly #waiters = new Map<string, Set<() => void>>();

  /**
   * Resolves on `wake(key)`, after `ms`, or when `signal` aborts.
   *
   * @param key What to wait for.
   * @param ms The longest wait.
   * @param signal Ends the wait early.
   * @returns When one of the three happened.
   */
  wait(key: string, ms: number, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      let waiters = this.#waiters.get(key);
      if (!waiters) this.#waiters.set(key, waiters = new Set());
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        waiters.delete(done);
        if (waiters.size === 0 && this.#waiters.get(key) === waiters) this.#waiters.delete(key);
        resolve();
      };
      const timer = setTimeout(done, ms);
      waiters.add(done);
      signal.addEventListener("abort", done, { once: true });
    });
  }

  /**
   * Ends every current wait on `key`.
   *
   * @param key The key.
   */
  wake(key: string): void {
    for (const done of [...this.#waiters.get(key) ?? []]) done();
  }
}
