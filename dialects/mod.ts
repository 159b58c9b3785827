/**
 * `@anubis/dialects`: one dialect per MCP protocol version (2025-03-26,
 * 2025-06-18, 2025-11-25 and the stateless 2026-07-28) and the default
 * registry of all four.
 *
 * @example
 * ```ts
 * import { createDefaultRegistry } from "@anubis/dialects";
 * import assert from "node:assert/strict";
 * const registry = createDefaultRegistry();
 * assert.deepEqual(registry.versions(), ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"]);
 * assert.equal(registry.negotiate("2026-07-28", registry.versions())?.version, "2025-11-25");
 * ```
 *
 * @module
 */

export { ALL_DIALECTS, createDefaultRegistry } from "./registry.ts";
export { spec2025_03_26, v2025_03_26 } from "./2025_03_26.ts";
export { spec2025_06_18, v2025_06_18 } from "./2025_06_18.ts";
export { spec2025_11_25, v2025_11_25 } from "./2025_11_25.ts";
export { spec2026_07_28, v2026_07_28 } from "./2026_07_28.ts";
export { defineDialect, type DialectSpec } from "./define_dialect.ts";
