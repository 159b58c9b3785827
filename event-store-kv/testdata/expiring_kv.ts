/**
 * A `KvLike` over a real in-memory `Deno.Kv` whose `expireIn` is exact on a
 * clock the test moves: a local KV file keeps an expired key readable for up
 * to a minute, so real expiry cannot be waited for in a test.
 */

import type { KvAtomic, KvKey, KvLike } from "@anubis/core/kv";

/** A database whose keys expire when {@link ExpiringKv.advance} passes their `expireIn`. */
export class ExpiringKv implements KvLike {
  readonly kv: Deno.Kv;
  /** The test's clock, in ms (pass `() => expiring.now` as a store's `now`). */
  now = 1_000_000_000_000;
  /** When each key expires, by its key as JSON (no entry: never). */
  readonly deadlines = new Map<string, number>();

  private constructor(kv: Deno.Kv) {
    this.kv = kv;
  }

  static async open(): Promise<ExpiringKv> {
    return new ExpiringKv(await Deno.openKv(":memory:"));
  }

  /** Moves the clock on and deletes every key whose time ran out. */
  async advance(ms: number): Promise<void> {
    this.now += ms;
    for (const [key, deadline] of this.deadlines) {
      if (deadline > this.now) continue;
      await this.kv.delete(JSON.parse(key, revive));
      this.deadlines.delete(key);
    }
  }

  get: KvLike["get"] = (key) => this.kv.get(key as Deno.KvKey);
  list: KvLike["list"] = (selector, options) =>
    this.kv.list(selector as Deno.KvListSelector, options);
  close(): void {
    this.kv.close();
  }

  atomic(): KvAtomic {
    const op = this.kv.atomic();
    const deadlines = new Map<string, number | undefined>();
    const wrapped: KvAtomic = {
      check: (...checks) => (op.check(...(checks as Deno.AtomicCheck[])), wrapped),
      set: (key, value, options) => {
        op.set(key as Deno.KvKey, value, options);
        deadlines.set(keyText(key), options?.expireIn && this.now + options.expireIn);
        return wrapped;
      },
      sum: (key, n) => {
        op.sum(key as Deno.KvKey, n);
        deadlines.set(keyText(key), undefined);
        return wrapped;
      },
      delete: (
        key,
      ) => (op.delete(key as Deno.KvKey), deadlines.set(keyText(key), undefined), wrapped),
      commit: async () => {
        const result = await op.commit();
        if (result.ok) {
          for (const [key, deadline] of deadlines) {
            if (deadline === undefined) this.deadlines.delete(key);
            else this.deadlines.set(key, deadline);
          }
        }
        return result;
      },
    };
    return wrapped;
  }

  /** When `key` expires (`undefined`: never, or it is missing). */
  deadline(key: KvKey): number | undefined {
    return this.deadlines.get(keyText(key));
  }
}

function keyText(key: KvKey): string {
  return JSON.stringify(key, (_, v) => typeof v === "bigint" ? { n: String(v) } : v);
}

function revive(_: string, v: unknown): unknown {
  return v && typeof v === "object" && "n" in v ? BigInt((v as { n: string }).n) : v;
}
