/**
 * The flat field schemas an elicitation form may ask for, per version:
 * strings, numbers, booleans and enums (2025-06-18), with defaults and
 * titled, untitled, single and multi-select enums from 2025-11-25 on
 * (SEP-1034, SEP-1330).
 *
 * @module
 */

import type { Feature } from "@anubis/core/engine";
import * as s from "@anubis/core/schema";
import { when } from "./_component_schemas.ts";

const text = s.optional(s.string());
const strings = s.array(s.string());
const labelled = { title: text, description: text };
const choice = s.object({ const: s.string(), title: s.string() });

/**
 * The schema of one field of a form (`PrimitiveSchemaDefinition`) in a
 * version with the given features.
 *
 * @param features The version's features.
 * @returns The schema.
 *
 * @example
 * ```ts
 * import * as s from "@anubis/core/schema";
 * import { primitiveSchemaDefinition } from "./_elicitation_schemas.ts";
 * import assert from "node:assert/strict";
 * const field = primitiveSchemaDefinition(new Set(["elicitation"]));
 * assert.equal(s.validate(field, { type: "string", minLength: "1" }).ok, false);
 * ```
 */
export function primitiveSchemaDefinition(features: ReadonlySet<Feature>): s.Schema {
  // Defaults and the enum variants came with 2025-11-25, as did URL elicitation.
  const rich = features.has("url_elicitation");
  const string = s.object({
    type: s.literal("string"),
    minLength: s.optional(s.integer()),
    maxLength: s.optional(s.integer()),
    format: s.optional(s.enumeration(["date", "date-time", "email", "uri"])),
    ...when(rich, { default: text }),
    ...labelled,
  });
  const number = s.object({
    type: s.enumeration(["integer", "number"]),
    minimum: s.optional(s.number()),
    maximum: s.optional(s.number()),
    ...when(rich, { default: s.optional(s.number()) }),
    ...labelled,
  });
  const boolean = s.object({
    type: s.literal("boolean"),
    default: s.optional(s.boolean()),
    ...labelled,
  });
  const legacyEnum = s.object({
    type: s.literal("string"),
    enum: strings,
    enumNames: s.optional(strings),
    ...when(rich, { default: text }),
    ...labelled,
  });
  if (!rich) return s.union([string, number, boolean, legacyEnum]);
  const multi = { minItems: s.optional(s.integer()), maxItems: s.optional(s.integer()) };
  const enums = [
    s.object({ type: s.literal("string"), oneOf: s.array(choice), default: text, ...labelled }),
    s.object({
      type: s.literal("array"),
      items: s.object({ type: s.literal("string"), enum: strings }),
      default: s.optional(strings),
      ...multi,
      ...labelled,
    }),
    s.object({
      type: s.literal("array"),
      items: s.object({ anyOf: s.array(choice) }),
      default: s.optional(strings),
      ...multi,
      ...labelled,
    }),
    legacyEnum,
  ];
  return s.union([string, number, boolean, ...enums]);
}
