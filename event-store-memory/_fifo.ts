/**
 * A first-in first-out queue with O(1) push, shift and indexed access.
 *
 * @module
 */

/**
 * A FIFO queue backed by an array and a head index, compacted when the dead
 * prefix outgrows the live part (so `shift` never copies the whole array).
 *
 * @example
 * ```ts
 * import { Fifo } from "./_fifo.ts";
 * import assert from "node:assert/strict";
 * const queue = new Fifo<number>();
 * queue.push(1);
 * queue.push(2);
 * assert.equal(queue.shift(), 1);
 * assert.equal(queue.length, 1);
 * ```
 */
export class Fifo<T> {
  #items: T[] = [];
  #head = 0;

  /** How many items the queue holds. */
  get length(): number {
    return this.#items.length - this.#head;
  }

  /**
   * Adds an item at the back.
   *
   * @param item The item.
   */
  push(item: T): void {
    this.#items.push(item);
  }

  /**
   * The item at `index` from the front, or `undefined`.
   *
   * @param index 0 is the front.
   * @returns The item.
   */
  at(index: number): T | undefined {
    return index < 0 || index >= this.length ? undefined : this.#items[this.#head + index];
  }

  /**
   * The front item without removing it.
   *
   * @returns The item, or `undefined` when empty.
   */
  peek(): T | undefined {
    return this.at(0);
  }

  /**
   * Removes and returns the front item.
   *
   * @returns The item, or `undefined` when empty.
   */
  shift(): T | undefined {
    if (this.length === 0) return undefined;
    const item = this.#items[this.#head];
    this.#items[this.#head] = undefined as T; // let the item be collected
    this.#head++;
    if (this.#head === this.#items.length) {
      this.#items = [];
      this.#head = 0;
    } else if (this.#head > 1024 && this.#head * 2 > this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
    return item;
  }

  /**
   * Keeps only the items `keep` accepts, in order.
   *
   * @param keep The predicate.
   */
  retain(keep: (item: T) => boolean): void {
    this.#items = this.#items.slice(this.#head).filter(keep);
    this.#head = 0;
  }

  /**
   * The items from `start` (front is 0) to the back, as a new array.
   *
   * @param start The first index.
   * @returns The items.
   */
  slice(start: number): T[] {
    return this.#items.slice(this.#head + Math.max(0, start));
  }
}
