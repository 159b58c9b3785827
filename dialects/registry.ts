/**
 * The registry of the versions this package has. Adding a version is its
 * module (stated against its predecessor's spec) and its entry here.
 *
 * @module
 */

import { type Dialect, Registry } from "@anubis/core/engine";
import { v2025_03_26 } from "./2025_03_26.ts";
import { v2025_06_18 } from "./2025_06_18.ts";
import { v2025_11_25 } from "./2025_11_25.ts";
import { v2026_07_28 } from "./2026_07_28.ts";

export * from "./2025_03_26.ts";
export * from "./2025_06_18.ts";
export * from "./2025_11_25.ts";
export * from "./2026_07_28.ts";

/**
 * Every version, newest first.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ALL_DIALECTS } from "@anubis/dialects";
 * assert.equal(ALL_DIALECTS.at(-1)?.version, "2025-03-26");
 * assert.ok(ALL_DIALECTS.some((d) => d.version === "2026-07-28"));
 * ```
 */
export const ALL_DIALECTS: readonly Dialect[] = [
  v2026_07_28,
  v2025_11_25,
  v2025_06_18,
  v2025_03_26,
];

/**
 * A fresh registry of every version (fresh, so registering a custom
 * dialect never leaks into another server).
 *
 * @returns The registry.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createDefaultRegistry } from "@anubis/dialects";
 * assert.equal(createDefaultRegistry().get("2025-06-18")?.era, "legacy");
 * ```
 */
export function createDefaultRegistry(): Registry {
  return new Registry(ALL_DIALECTS);
}
