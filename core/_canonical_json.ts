/**
 * JSON with object keys sorted at every level, so equal values encode alike:
 * the key of a cached schema, the digest input of sealed arguments.
 *
 * @module
 */

/**
 * The JSON text of a value with every object's keys sorted (and `undefined`
 * members left out, as `JSON.stringify` does), so equal values share one text.
 *
 * @param value A JSON value.
 * @returns Its canonical JSON text.
 *
 * @example
 * ```ts
 * import { canonicalJson } from "./_canonical_json.ts";
 * import assert from "node:assert/strict";
 * assert.equal(canonicalJson({ b: 1, a: [{ d: 2, c: 3 }] }), '{"a":[{"c":3,"d":2}],"b":1}');
 * ```
 */
export function canonicalJson(value: unknown): string {
  if (typeof value !== "object" || value === null) return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const object = value as Record<string, unknown>;
  let text = "";
  for (const key of Object.keys(object).sort()) {
    if (object[key] === undefined) continue;
    text += `${text ? "," : ""}${JSON.stringify(key)}:${canonicalJson(object[key])}`;
  }
  return `{${text}}`;
}
