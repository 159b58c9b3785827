/**
 * The version registry: looks dialects up, negotiates `initialize`, and
 * classifies a request's era.
 *
 * @module
 */

import type { Dialect } from "./dialect.ts";
import type { JsonRpcRequest } from "./json_rpc.ts";
import { MetaKey } from "./meta.ts";
import type { Era } from "./types.ts";

/**
 * The era a request claims, from its body alone (digest §2.4): a request is
 * stateless when `params._meta` holds the protocol-version key, whatever its
 * value; otherwise it is legacy traffic.
 *
 * @example
 * ```ts
 * import type { EraClaim } from "@anubis/core/engine";
 * const claim: EraClaim = { era: "stateless", version: "2026-07-28" };
 * ```
 */
export type EraClaim = { era: "legacy" } | { era: "stateless"; version: unknown };

/**
 * Reads the era a request claims from its `_meta`.
 *
 * @param request The request (or notification).
 * @returns The claim.
 *
 * @example
 * ```ts
 * import { classifyEra } from "@anubis/core/engine";
 * import assert from "node:assert/strict";
 * const claim = classifyEra({
 *   jsonrpc: "2.0",
 *   id: 1,
 *   method: "tools/list",
 *   params: { _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28" } },
 * });
 * assert.equal(claim.era, "stateless");
 * ```
 */
export function classifyEra(request: Omit<JsonRpcRequest, "id"> & { id?: unknown }): EraClaim {
  const meta = statelessMeta(request);
  return meta ? { era: "stateless", version: meta[MetaKey.protocolVersion] } : { era: "legacy" };
}

/**
 * The `_meta` of a message that claims a stateless version (what
 * {@link classifyEra} tests), else `undefined`: for the engine, which reads
 * the version from it with no claim object per message. Not exported by
 * `@anubis/core/engine`.
 */
export function statelessMeta(
  request: Omit<JsonRpcRequest, "id"> & { id?: unknown },
): Record<string, unknown> | undefined {
  const meta = request.params?._meta;
  return typeof meta === "object" && meta !== null && !Array.isArray(meta) &&
      MetaKey.protocolVersion in meta
    ? meta as Record<string, unknown>
    : undefined;
}

/**
 * A set of dialects, newest first.
 *
 * @example
 * ```ts
 * import { Registry, type Dialect } from "@anubis/core/engine";
 * import assert from "node:assert/strict";
 * const registry = new Registry();
 * assert.deepEqual(registry.versions(), []);
 * ```
 */
export class Registry {
  #dialects = new Map<string, Dialect>();
  #sorted: Dialect[] = [];

  /**
   * Creates a registry holding the given dialects.
   *
   * @param dialects The dialects to register.
   */
  constructor(dialects: Iterable<Dialect> = []) {
    for (const dialect of dialects) this.register(dialect);
  }

  /**
   * Adds (or replaces) the dialect of a version.
   *
   * @param dialect The dialect.
   * @returns This registry.
   *
   * @example
   * ```ts
   * import { Registry } from "@anubis/core/engine";
   * import { v2025_06_18, v2025_11_25 } from "@anubis/dialects";
   * import assert from "node:assert/strict";
   * const registry = new Registry().register(v2025_06_18);
   * registry.register(v2025_11_25).register(v2025_06_18);
   * assert.deepEqual(registry.versions(), [ "2025-11-25", "2025-06-18" ]);
   * ```
   */
  register(dialect: Dialect): this {
    this.#dialects.set(dialect.version, dialect);
    // Version strings are ISO dates, so string order is release order.
    this.#sorted = [...this.#dialects.values()].sort((a, b) => (a.version < b.version ? 1 : -1));
    return this;
  }

  /**
   * Looks a version up.
   *
   * @param version The version string.
   * @returns Its dialect, or `undefined`.
   *
   * @example
   * ```ts
   * import { Registry } from "@anubis/core/engine";
   * import { v2025_11_25 } from "@anubis/dialects";
   * import assert from "node:assert/strict";
   * const registry = new Registry([v2025_11_25]);
   * assert.equal(registry.get("2025-11-25")?.era, "legacy");
   * assert.equal(registry.get("1999-01-01"), undefined);
   * assert.equal(registry.get(20251125), undefined);
   * ```
   */
  get(version: unknown): Dialect | undefined {
    if (typeof version !== "string") return undefined;
    // A scan of the few dialects, not a map probe: a version read from a
    // message is a new string each time, and hashing it for the probe costs
    // more than comparing it with each version.
    for (const dialect of this.#sorted) if (dialect.version === version) return dialect;
    return undefined;
  }

  /**
   * Every registered version, newest first, optionally of one era.
   *
   * @param era Only versions of this era.
   * @returns The version strings.
   *
   * @example
   * ```ts
   * import { Registry } from "@anubis/core/engine";
   * import { v2025_06_18, v2025_11_25, v2026_07_28 } from "@anubis/dialects";
   * import assert from "node:assert/strict";
   * const registry = new Registry([
   *   v2025_06_18,
   *   v2026_07_28,
   *   v2025_11_25,
   * ]);
   * assert.deepEqual(registry.versions(), [ "2026-07-28", "2025-11-25", "2025-06-18" ]);
   * assert.deepEqual(registry.versions("stateless"), [ "2026-07-28" ]);
   * ```
   */
  versions(era?: Era): string[] {
    return this.#sorted.filter((d) => !era || d.era === era).map((d) => d.version);
  }

  /**
   * Negotiates an `initialize` request: the requested version when it is a
   * registered legacy version in `allowed`, otherwise the newest allowed legacy
   * version. `initialize` never selects the stateless era.
   *
   * @param requested The client's `protocolVersion`.
   * @param allowed The versions the server serves.
   * @returns The dialect to use, or `undefined` when no legacy version is allowed.
   *
   * @example
   * ```ts
   * import { Registry } from "@anubis/core/engine";
   * import { v2025_06_18, v2025_11_25, v2026_07_28 } from "@anubis/dialects";
   * import assert from "node:assert/strict";
   * const registry = new Registry([
   *   v2025_06_18,
   *   v2025_11_25,
   *   v2026_07_28,
   * ]);
   * const allowed = registry.versions();
   * assert.equal(registry.negotiate("2025-06-18", allowed)?.version, "2025-06-18");
   * assert.equal(registry.negotiate("1999-01-01", allowed)?.version, "2025-11-25");
   * assert.equal(registry.negotiate("2026-07-28", allowed)?.version, "2025-11-25");
   * assert.equal(registry.negotiate("2025-11-25", ["2026-07-28"]), undefined);
   * ```
   */
  negotiate(requested: unknown, allowed: readonly string[]): Dialect | undefined {
    const candidates = this.#sorted.filter((d) =>
      d.era === "legacy" && allowed.includes(d.version)
    );
    return candidates.find((d) => d.version === requested) ?? candidates[0];
  }
}
