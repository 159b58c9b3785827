/**
 * Per-key wake-ups with generations: a tail notes the generation before it
 * reads, and waits only if nothing woke the key since, so a wake-up that
 * arrives between its read and its wait is never lost.
 *
 * @module
 */

/** Wake-ups of tails, per key. */
export class Wakeups {
  readonly #generations = new Map<string, number>();
  readonly #waiters = new Map<string, Set<() => void>>();

  /** The key's generation (how many wake-ups it had while watched). */
  generation(key: string): number {
    return this.#generations.get(key) ?? 0;
  }

  /**
   * Resolves on a wake-up of `key` after generation `since` (at once if one
   * came already), after `ms`, or when `signal` aborts.
   */
  wait(key: string, since: number, ms: number, signal: AbortSignal): Promise<void> {
    if (signal.aborted || this.generation(key) !== since) return Promise.resolve();
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

  /** Counts a wake-up of `key` (while watched) and ends its current waits. */
  wake(key: string): void {
    if (this.#generations.has(key)) this.#generations.set(key, this.generation(key) + 1);
    for (const done of [...this.#waiters.get(key) ?? []]) done();
  }

  /** Starts counting `key`'s wake-ups; returns a function that stops (counted per watcher). */
  watch(key: string): () => void {
    this.#generations.set(key, this.generation(key));
    const counts = this.#watchers;
    counts.set(key, (counts.get(key) ?? 0) + 1);
    return () => {
      const left = (counts.get(key) ?? 1) - 1;
      if (left > 0) counts.set(key, left);
      else {
        counts.delete(key);
        this.#generations.delete(key);
      }
    };
  }

  readonly #watchers = new Map<string, number>();
}
