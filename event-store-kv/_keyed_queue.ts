/**
 * Running async work one at a time per key.
 *
 * @module
 */

/**
 * Serializes work per key (different keys run concurrently). Appends to one
 * session inside a process go through it, so the optimistic id allocation
 * only ever races other processes, not itself.
 *
 * @example
 * ```ts
 * import { KeyedQueue } from "./_keyed_queue.ts";
 * import assert from "node:assert/strict";
 * const queue = new KeyedQueue();
 * const order: number[] = [];
 * await Promise.all([1, 2, 3].map((n) => queue.run("s", async () => order.push(n))));
 * assert.deepEqual(order, [ 1, 2, 3 ]);
 * ```
 */
export class KeyedQueue {
  readonly #tails = new Map<string, Promise<unknown>>();

  /**
   * Runs `work` after every earlier `work` for `key` has settled.
   *
   * @param key The key.
   * @param work The work.
   * @returns What `work` returned.
   */
  run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key) ?? Promise.resolve();
    const result = previous.then(work, work);
    const tail = result.then(() => {}, () => {});
    this.#tails.set(key, tail);
    tail.then(() => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    });
    return result;
  }
}
