/**
 * `@anubis/dialects`: one dialect per MCP protocol version (2025-03-26,
 * 2025-06-18, 2025-11-25 and the stateless 2026-07-28) and the default
 * registry of all four.
 *
 * @example
 * ```ts
 * import { createDefaultRegistry } from "@anubis/dialects";
 * const registry = createDefaultRegistry();
 * console.log(registry.versions()); // ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"]
 * console.log(registry.negotiate("2026-07-28", registry.versions())?.version); // 2025-11-25
 * ```
 *
 * @module
 */

export * from "./registry.ts";
export { defineDialect, type DialectSpec } from "./define_dialect.ts";
export { type ComponentSchemas, componentSchemas, when } from "./component_schemas.ts";
export { resultSchemas } from "./result_schemas.ts";
export { primitiveSchemaDefinition } from "./elicitation_schemas.ts";
export { serverNotificationParamsSchemas, serverRequestParamsSchemas } from "./message_schemas.ts";
export { encodeStatelessResult, legacyEncoder, type LegacyOmissions, strip } from "./encoding.ts";
