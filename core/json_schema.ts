/**
 * Validation of tool arguments and structured output: JSON Schema (2020-12:
 * the common subset by a built-in compiler, anything else compiled once with
 * Ajv, loaded on first use) or any Standard Schema (zod, valibot, arktype…).
 *
 * @module
 */

import { compileSubset } from "./_json_schema_subset.ts";
import { formatIssues, type Issue } from "./schema.ts";

/**
 * A JSON Schema object.
 *
 * @example
 * ```ts
 * import type { JsonSchema } from "@anubis/core";
 * const schema: JsonSchema = { type: "object", properties: { city: { type: "string" } } };
 * ```
 */
export type JsonSchema = { [key: string]: unknown };

/**
 * The Standard Schema v1 interface (https://standardschema.dev), with the
 * optional Standard JSON Schema converter used to list the tool.
 *
 * @example
 * ```ts
 * import type { StandardSchemaV1 } from "@anubis/core";
 * const even: StandardSchemaV1<number> = {
 *   "~standard": {
 *     version: 1,
 *     vendor: "example",
 *     validate: (v) => typeof v === "number" && v % 2 === 0
 *       ? { value: v }
 *       : { issues: [{ message: "expected an even number" }] },
 *   },
 * };
 * ```
 */
export interface StandardSchemaV1<Output = unknown> {
  /** The Standard Schema properties. */
  readonly "~standard": {
    /** Always 1. */
    readonly version: 1;
    /** The library's name. */
    readonly vendor: string;
    /** Validates a value. */
    readonly validate: (
      value: unknown,
    ) =>
      | StandardResult<Output>
      | Promise<StandardResult<Output>>;
    /** The Standard JSON Schema converter, when the library has one. */
    readonly jsonSchema?: {
      readonly input: (options: { target: string }) => Record<string, unknown>;
      readonly output?: (options: { target: string }) => Record<string, unknown>;
    };
  };
}

/**
 * The result of a Standard Schema validation: the value, or the issues.
 *
 * @example
 * ```ts
 * import type { StandardResult } from "@anubis/core";
 * import assert from "node:assert/strict";
 * const failed: StandardResult<number> = { issues: [{ message: "Expected a number", path: ["a"] }] };
 * assert.equal(failed.issues?.length, 1);
 * ```
 */
export type StandardResult<Output> =
  | { readonly value: Output; readonly issues?: undefined }
  | {
    readonly issues: readonly {
      readonly message: string;
      readonly path?: readonly (PropertyKey | { readonly key: PropertyKey })[];
    }[];
  };

/**
 * Tells whether a value is a Standard Schema.
 *
 * @param value Any value.
 * @returns `true` when it has a `~standard` property.
 *
 * @example
 * ```ts
 * import { isStandardSchema } from "@anubis/core/engine";
 * import assert from "node:assert/strict";
 * assert.equal(isStandardSchema({ type: "object" }), false);
 * ```
 */
export function isStandardSchema(value: unknown): value is StandardSchemaV1 {
  // arktype's schemas are functions.
  return (typeof value === "object" || typeof value === "function") && value !== null &&
    "~standard" in value;
}

/**
 * The outcome of a {@link Validator}.
 *
 * @example
 * ```ts
 * import { compileValidator, type Validation } from "./json_schema.ts";
 * import assert from "node:assert/strict";
 * const checked: Validation = await compileValidator({ type: "integer" })(1.5);
 * assert.equal(checked.ok ? checked.value : checked.message, "must be integer");
 * ```
 */
export type Validation = { ok: true; value: unknown } | { ok: false; message: string };

/**
 * A compiled validator.
 *
 * @example
 * ```ts
 * import { compileValidator } from "./json_schema.ts";
 * import assert from "node:assert/strict";
 * const validate = compileValidator({ type: "object", required: ["a"] });
 * assert.equal((await validate({})).ok, false);
 * ```
 */
export type Validator = (value: unknown) => Validation | Promise<Validation>;

type AjvValidate = ((value: unknown) => boolean) & {
  errors?: { instancePath: string; message?: string }[] | null;
};
type AjvInstance = {
  compile(schema: JsonSchema): AjvValidate;
  validateSchema(schema: JsonSchema, throwOrLogError: boolean): boolean;
};
type AjvClass = new (options: object) => AjvInstance;

const AJV_OPTIONS = { strict: false, allErrors: true, validateFormats: false };

type AjvCompile = (schema: JsonSchema) => AjvValidate;

let ajv: Promise<AjvCompile> | undefined;

// An Ajv instance keeps every schema it compiled, and the compiled code, for
// its own lifetime (its cache and its code scope hold them; `removeSchema`
// clears only the cache). So one shared instance only checks schemas against
// their meta-schema, and each schema compiles in an instance of its own,
// freed with the validator that holds it.
function loadAjv(): Promise<AjvCompile> {
  ajv ??= import("ajv/dist/2020.js").then((module) => {
    const Ajv = (module.default ?? module) as unknown as AjvClass;
    const metaChecker = new Ajv(AJV_OPTIONS);
    return (schema: JsonSchema) => {
      // Throws for an invalid schema, as `compile` does when it checks it itself.
      metaChecker.validateSchema(schema, true);
      return new Ajv({ ...AJV_OPTIONS, validateSchema: false }).compile(schema);
    };
  });
  return ajv;
}

/**
 * Compiles a JSON Schema or wraps a Standard Schema into a validator. A JSON
 * Schema of the common subset (type, properties, required, enum, const,
 * items, bounds, lengths, pattern, additionalProperties) is compiled at once
 * and validates synchronously; any other is compiled by Ajv on its first use.
 *
 * @param schema The schema.
 * @returns The validator.
 *
 * @example
 * ```ts
 * import { compileValidator } from "./json_schema.ts";
 * import assert from "node:assert/strict";
 * const validate = compileValidator({ type: "object", properties: { n: { type: "integer" } } });
 * assert.deepEqual(await validate({ n: 1.5 }), { ok: false, message: "n: must be integer" });
 * ```
 */
export function compileValidator(schema: JsonSchema | StandardSchemaV1): Validator {
  if (isStandardSchema(schema)) {
    const standard = schema["~standard"];
    return async (value) => {
      const result = await standard.validate(value);
      if (!result.issues) return { ok: true, value: result.value };
      return { ok: false, message: result.issues.map(formatStandardIssue).join("; ") };
    };
  }
  const subset = compileSubset(schema);
  if (subset) {
    return (value) => {
      const issues: Issue[] = [];
      subset(value, issues);
      return issues.length === 0
        ? { ok: true, value }
        : { ok: false, message: formatIssues(issues) };
    };
  }
  let compiled: AjvValidate | undefined;
  const run = (value: unknown): Validation => {
    if (compiled!(value)) return { ok: true, value };
    return { ok: false, message: formatAjvErrors(compiled!.errors ?? []) };
  };
  return (value) => {
    if (compiled) return run(value);
    return loadAjv().then((compile) => {
      compiled ??= compile(schema);
      return run(value);
    });
  };
}

function formatStandardIssue(issue: {
  message: string;
  path?: readonly (PropertyKey | { readonly key: PropertyKey })[];
}): string {
  const path = (issue.path ?? []).map((p) => String(typeof p === "object" ? p.key : p)).join(".");
  return path ? `${path}: ${issue.message}` : issue.message;
}

function formatAjvErrors(errors: { instancePath: string; message?: string }[]): string {
  return errors.map((e) => {
    const path = e.instancePath.slice(1).replaceAll("/", ".");
    return path ? `${path}: ${e.message}` : (e.message ?? "invalid");
  }).join("; ");
}

/**
 * The JSON Schema to advertise for a tool schema: the schema itself, or the
 * Standard Schema's JSON Schema (draft 2020-12).
 *
 * @param schema The schema.
 * @returns The JSON Schema.
 * @throws {TypeError} For a Standard Schema without a JSON Schema converter.
 *
 * @example
 * ```ts
 * import { toJsonSchema } from "@anubis/core/engine";
 * import assert from "node:assert/strict";
 * assert.deepEqual(toJsonSchema({ type: "object" }), { type: "object" });
 * ```
 */
export function toJsonSchema(schema: JsonSchema | StandardSchemaV1): JsonSchema {
  if (!isStandardSchema(schema)) return schema;
  const converter = schema["~standard"].jsonSchema;
  if (!converter) {
    throw new TypeError(
      `The ${
        schema["~standard"].vendor
      } schema cannot describe itself as JSON Schema (tools/list needs one): pass a JSON Schema, or a Standard Schema that implements Standard JSON Schema (zod 4, arktype 2, valibot 1 through @valibot/to-json-schema)`,
    );
  }
  return converter.input({ target: "draft-2020-12" });
}

/** Fills a validated value's defaults in (see {@link defaultsFiller}). */
export type Filler = (value: Record<string, unknown>) => Record<string, unknown>;

/**
 * What fills the `default`s of a JSON Schema's object properties into a
 * validated value: each property missing from an object gets its schema's
 * `default` (a copy), in nested objects too; the value is copied only where
 * something was filled. `undefined` when the schema declares no default, so
 * tools without defaults pay nothing.
 *
 * @param schema A tool's input JSON Schema.
 * @returns The filler, or `undefined`.
 */
export function defaultsFiller(schema: JsonSchema): Filler | undefined {
  const properties = schema.properties;
  if (typeof properties !== "object" || properties === null || Array.isArray(properties)) {
    return undefined;
  }
  const defaults: [string, unknown][] = [];
  const nested: [string, Filler][] = [];
  for (const [key, property] of Object.entries(properties as Record<string, JsonSchema>)) {
    if (typeof property !== "object" || property === null) continue;
    if ("default" in property) defaults.push([key, property.default]);
    const inner = defaultsFiller(property);
    if (inner) nested.push([key, inner]);
  }
  if (defaults.length === 0 && nested.length === 0) return undefined;
  return (value) => {
    let filled = value;
    for (const [key, fallback] of defaults) {
      if (filled[key] !== undefined) continue;
      if (filled === value) filled = { ...value };
      filled[key] = structuredClone(fallback);
    }
    for (const [key, inner] of nested) {
      const child = filled[key];
      if (typeof child !== "object" || child === null || Array.isArray(child)) continue;
      const done = inner(child as Record<string, unknown>);
      if (done === child) continue;
      if (filled === value) filled = { ...value };
      filled[key] = done;
    }
    return filled;
  };
}
