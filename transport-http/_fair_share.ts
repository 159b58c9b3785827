/**
 * Who holds what of a shared pool (session slots, stream slots), and who
 * holds the most, so that a full pool can take a slot back from its
 * largest holder for a client that holds fewer: no handful of clients can
 * lock the others out by holding their own bounds.
 *
 * @module
 */

/**
 * Each client's items, oldest first, and the clients grouped by how many
 * they hold: adding, removing and finding the largest holders are O(1)
 * (amortized).
 *
 * @example
 * ```ts
 * import { ClientHoldings } from "./_fair_share.ts";
 * import assert from "node:assert/strict";
 * const holdings = new ClientHoldings<string>();
 * holdings.add("10.0.0.1", "a");
 * holdings.add("10.0.0.1", "b");
 * holdings.add("10.0.0.2", "c");
 * assert.equal(holdings.count("10.0.0.1"), 2);
 * assert.deepEqual([...holdings.largest(0)], [["10.0.0.1", new Set(["a", "b"])]]);
 * holdings.delete("10.0.0.1", "a");
 * assert.equal(holdings.count("10.0.0.1"), 1);
 * ```
 */
export class ClientHoldings<T> {
  readonly #held = new Map<string, Set<T>>();
  /** `#byCount[n]`: the clients holding exactly `n` items, in the order they got there. */
  readonly #byCount: Set<string>[] = [];
  #top = 0;

  /**
   * How many items a client holds.
   *
   * @param client The client.
   * @returns The count (0 for an unknown client).
   *
   * @example
   * ```ts
   * import { ClientHoldings } from "./_fair_share.ts";
   * import assert from "node:assert/strict";
   * assert.equal(new ClientHoldings<number>().count("10.0.0.1"), 0);
   * ```
   */
  count(client: string): number {
    return this.#held.get(client)?.size ?? 0;
  }

  /**
   * A client's items, oldest first.
   *
   * @param client The client.
   * @returns Its items, or `undefined` when it holds none.
   *
   * @example
   * ```ts
   * import { ClientHoldings } from "./_fair_share.ts";
   * import assert from "node:assert/strict";
   * const holdings = new ClientHoldings<number>();
   * holdings.add("10.0.0.1", 7);
   * assert.deepEqual([...holdings.of("10.0.0.1")!], [7]);
   * assert.equal(holdings.of("10.0.0.2"), undefined);
   * ```
   */
  of(client: string): ReadonlySet<T> | undefined {
    return this.#held.get(client);
  }

  /**
   * Records that a client holds one more item.
   *
   * @param client The client.
   * @param item The item (added once).
   *
   * @example
   * ```ts
   * import { ClientHoldings } from "./_fair_share.ts";
   * import assert from "node:assert/strict";
   * const holdings = new ClientHoldings<number>();
   * holdings.add("10.0.0.1", 1);
   * holdings.add("10.0.0.1", 1); // already held
   * assert.equal(holdings.count("10.0.0.1"), 1);
   * ```
   */
  add(client: string, item: T): void {
    let held = this.#held.get(client);
    if (held === undefined) this.#held.set(client, held = new Set());
    const before = held.size;
    held.add(item);
    if (held.size !== before) this.#move(client, before, held.size);
  }

  /**
   * Records that a client no longer holds an item.
   *
   * @param client The client.
   * @param item The item.
   * @returns Whether the client held it.
   *
   * @example
   * ```ts
   * import { ClientHoldings } from "./_fair_share.ts";
   * import assert from "node:assert/strict";
   * const holdings = new ClientHoldings<number>();
   * holdings.add("10.0.0.1", 1);
   * assert.equal(holdings.delete("10.0.0.1", 1), true);
   * assert.equal(holdings.delete("10.0.0.1", 1), false);
   * assert.equal(holdings.of("10.0.0.1"), undefined);
   * ```
   */
  delete(client: string, item: T): boolean {
    const held = this.#held.get(client);
    if (!held?.delete(item)) return false;
    if (held.size === 0) this.#held.delete(client);
    this.#move(client, held.size + 1, held.size);
    return true;
  }

  /**
   * The clients that hold at least two more items than `than` (so that one
   * taken from them for a client holding `than` leaves them at least as
   * many), largest holders first, with their items oldest first.
   *
   * @param than What the asking client holds.
   * @returns The clients and their items; iterate only as far as needed.
   *
   * @example
   * ```ts
   * import { ClientHoldings } from "./_fair_share.ts";
   * import assert from "node:assert/strict";
   * const holdings = new ClientHoldings<number>();
   * holdings.add("10.0.0.1", 1);
   * holdings.add("10.0.0.1", 2);
   * holdings.add("10.0.0.2", 3);
   * assert.deepEqual([...holdings.largest(0)].map(([client]) => client), ["10.0.0.1"]);
   * assert.deepEqual([...holdings.largest(1)], []); // 2 is not 1 + 2
   * ```
   */
  *largest(than: number): Generator<[string, ReadonlySet<T>]> {
    while (this.#top > 0 && !this.#byCount[this.#top]?.size) this.#top--;
    for (let count = this.#top; count >= than + 2; count--) {
      const clients = this.#byCount[count];
      if (clients === undefined) continue;
      for (const client of clients) yield [client, this.#held.get(client)!];
    }
  }

  #move(client: string, from: number, to: number): void {
    if (from > 0) this.#byCount[from].delete(client);
    if (to > 0) (this.#byCount[to] ??= new Set()).add(client);
    if (to > this.#top) this.#top = to;
  }
}
