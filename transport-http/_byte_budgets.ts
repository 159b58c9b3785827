/**
 * Byte budgets of one HTTP handler: the request bodies being read at once,
 * and what its legacy sessions retain (the client's handshake data and
 * subscriptions), per session, per client and in total.
 *
 * @module
 */

/** The default bound on the bodies being read at once (256 MiB). */
export const DEFAULT_MAX_BODY_BYTES_IN_FLIGHT = 256 * 1024 * 1024;
/** The default bound on the bodies one client has being read at once (64 MiB). */
export const DEFAULT_MAX_BODY_BYTES_IN_FLIGHT_PER_CLIENT = 64 * 1024 * 1024;
/** The default bound on what one session retains of the client's data (64 KiB). */
export const DEFAULT_MAX_SESSION_BYTES = 64 * 1024;
/** The default bound on what one client's sessions retain together (16 MiB). */
export const DEFAULT_MAX_SESSION_BYTES_PER_CLIENT = 16 * 1024 * 1024;
/** The default bound on what every session retains together (256 MiB). */
export const DEFAULT_MAX_SESSION_BYTES_TOTAL = 256 * 1024 * 1024;

/**
 * Bytes held against a bound, in total and per client: `take` reserves,
 * `give` returns. What the request bodies being read hold at once.
 *
 * @example
 * ```ts
 * import { ByteBudget } from "./_byte_budgets.ts";
 * import assert from "node:assert/strict";
 * const budget = new ByteBudget(100, 60);
 * assert.equal(budget.take(60, "a"), undefined);
 * assert.equal(budget.take(1, "a"), "client"); // a's share is used up: nothing taken
 * assert.equal(budget.take(60, "b"), "total"); // 120 would pass the bound
 * assert.equal(budget.take(40), undefined); // no client: the total only
 * budget.give(60, "a");
 * budget.give(40);
 * assert.equal(budget.used, 0);
 * ```
 */
export class ByteBudget {
  /** The bound. */
  readonly max: number;
  /** The most one client may hold. */
  readonly perClient: number;
  #used = 0;
  readonly #byClient = new Map<string, number>();

  /**
   * Creates the budget.
   *
   * @param max The bound, in bytes.
   * @param perClient The most one client may hold (default: `max`).
   */
  constructor(max: number, perClient: number = max) {
    this.max = max;
    this.perClient = perClient;
  }

  /** The bytes held now. */
  get used(): number {
    return this.#used;
  }

  /**
   * Reserves `bytes` for `client` if they fit under its share and the bound.
   *
   * @param bytes How many.
   * @param client Who holds them (`undefined`: counted in the total only).
   * @returns What refused them (nothing taken), or `undefined` when taken.
   */
  take(bytes: number, client?: string): RetainedRefusal | undefined {
    if (this.#used + bytes > this.max) return "total";
    if (client !== undefined) {
      const held = (this.#byClient.get(client) ?? 0) + bytes;
      if (held > this.perClient) return "client";
      this.#byClient.set(client, held);
    }
    this.#used += bytes;
    return undefined;
  }

  /**
   * Returns bytes reserved with {@link take}.
   *
   * @param bytes How many.
   * @param client Who held them.
   */
  give(bytes: number, client?: string): void {
    this.#used -= bytes;
    if (client === undefined) return;
    const held = (this.#byClient.get(client) ?? 0) - bytes;
    if (held > 0) this.#byClient.set(client, held);
    else this.#byClient.delete(client);
  }
}

/**
 * What a {@link RetainedBudget} or a {@link ByteBudget} refuses: the client's
 * share (`"client"`) or the process's total (`"total"`).
 */
export type RetainedRefusal = "client" | "total";

/**
 * The bytes legacy sessions retain, per client and in total. The session
 * table charges a session's handshake data when it opens and its
 * subscriptions as they are made, and releases them when the session ends.
 *
 * @example
 * ```ts
 * import { RetainedBudget } from "./_byte_budgets.ts";
 * import assert from "node:assert/strict";
 * const budget = new RetainedBudget(64, 100, 150);
 * assert.equal(budget.charge("a", 100), undefined);
 * assert.equal(budget.charge("a", 1), "client"); // a's share is used up
 * assert.equal(budget.charge("b", 60), "total"); // 160 would pass the total
 * assert.equal(budget.charge("b", 50), undefined);
 * budget.release("a", 100);
 * assert.equal(budget.total, 50);
 * ```
 */
export class RetainedBudget {
  /** The most one session may retain. */
  readonly perSession: number;
  /** The most one client's sessions may retain together. */
  readonly perClient: number;
  /** The most every session may retain together. */
  readonly max: number;
  readonly #byClient = new Map<string, number>();
  #total = 0;

  /**
   * Creates the budget.
   *
   * @param perSession The most one session may retain.
   * @param perClient The most one client's sessions may retain together.
   * @param max The most every session may retain together.
   */
  constructor(perSession: number, perClient: number, max: number) {
    this.perSession = perSession;
    this.perClient = perClient;
    this.max = max;
  }

  /** The bytes every session retains now. */
  get total(): number {
    return this.#total;
  }

  /**
   * What one client's sessions retain now.
   *
   * @param client The client.
   * @returns Bytes.
   */
  heldBy(client: string): number {
    return this.#byClient.get(client) ?? 0;
  }

  /**
   * Charges `bytes` to `client` (`undefined`: to the total only), unless they
   * would pass its share or the total.
   *
   * @param client Who retains them.
   * @param bytes How many.
   * @returns What refused them, or `undefined` when charged.
   */
  charge(client: string | undefined, bytes: number): RetainedRefusal | undefined {
    const held = client === undefined ? 0 : this.#byClient.get(client) ?? 0;
    if (client !== undefined && held + bytes > this.perClient) return "client";
    if (this.#total + bytes > this.max) return "total";
    this.#total += bytes;
    if (client !== undefined) this.#byClient.set(client, held + bytes);
    return undefined;
  }

  /**
   * Gives back what {@link charge} took.
   *
   * @param client Who retained them.
   * @param bytes How many.
   */
  release(client: string | undefined, bytes: number): void {
    if (bytes === 0) return;
    this.#total -= bytes;
    if (client === undefined) return;
    const held = (this.#byClient.get(client) ?? 0) - bytes;
    if (held > 0) this.#byClient.set(client, held);
    else this.#byClient.delete(client);
  }
}

/** What a value of each kind is counted as, roughly what V8 holds for it (64-bit). */
const OBJECT_BYTES = 64, ENTRY_BYTES = 32, ARRAY_BYTES = 32, STRING_BYTES = 16, NUMBER_BYTES = 16;

/**
 * The bytes a string is counted as: its header and two bytes per character
 * (the most V8 takes for it).
 *
 * @param text The string.
 * @returns Bytes.
 *
 * @example
 * ```ts
 * import { stringBytes } from "./_byte_budgets.ts";
 * import assert from "node:assert/strict";
 * assert.equal(stringBytes("abc"), 22);
 * ```
 */
export function stringBytes(text: string): number {
  return STRING_BYTES + 2 * text.length;
}

/**
 * Estimates the memory a JSON value holds once parsed and kept (an object 64
 * bytes plus 32 and its key per entry, an array 32 plus 32 per element, a
 * string 16 plus 2 per character, a number 16), without recursion, and
 * stopping as soon as the estimate passes `limit`: a 4 MB value is refused
 * after reading a little more than `limit` of it.
 *
 * @param value The value (from `JSON.parse`).
 * @param limit Where to stop counting.
 * @returns The estimate, or a number above `limit` when it passes it.
 *
 * @example
 * ```ts
 * import { retainedBytes } from "./_byte_budgets.ts";
 * import assert from "node:assert/strict";
 * assert.equal(retainedBytes({ roots: { listChanged: true } }, 1024), 64 + 32 + 26 + 64 + 32 + 38);
 * assert.ok(retainedBytes({ experimental: { big: "x".repeat(4096) } }, 1024) > 1024);
 * assert.equal(retainedBytes(undefined, 1024), 0);
 * ```
 */
export function retainedBytes(value: unknown, limit: number): number {
  let total = 0;
  // Each pushed value was counted at least ENTRY_BYTES first, so the stack
  // holds at most limit / ENTRY_BYTES values.
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const item = stack.pop();
    if (typeof item === "string") total += stringBytes(item);
    else if (typeof item === "number") total += NUMBER_BYTES;
    else if (item !== null && typeof item === "object") {
      if (Array.isArray(item)) {
        total += ARRAY_BYTES;
        for (const element of item) {
          total += ENTRY_BYTES;
          if (total > limit) return total;
          stack.push(element);
        }
      } else {
        total += OBJECT_BYTES;
        for (const key in item) {
          total += ENTRY_BYTES + stringBytes(key);
          if (total > limit) return total;
          stack.push((item as Record<string, unknown>)[key]);
        }
      }
    }
    if (total > limit) return total;
  }
  return total;
}
