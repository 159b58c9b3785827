/**
 * A small, fast structural validator for protocol messages. Dialects describe
 * every params and result shape of their version with these builders; the
 * engine validates incoming params with them.
 *
 * Objects are open by default (unknown keys are kept), as MCP allows
 * extension fields; {@link strictObject} rejects unknown keys and is meant for
 * tests that pin an exact wire shape.
 *
 * @example
 * ```ts
 * import * as s from "@anubis/core/schema";
 * import assert from "node:assert/strict";
 * const params = s.object({ name: s.string(), arguments: s.optional(s.record(s.unknown())) });
 * assert.equal(s.validate(params, { name: "echo" }).ok, true);
 * assert.equal(s.validate(params, { name: 1 }).ok, false);
 * ```
 *
 * @module
 */

/**
 * A path into a value, from the root.
 *
 * @example
 * ```ts
 * import type { Path } from "@anubis/core/schema";
 * const path: Path = ["arguments", "items", 0];
 * ```
 */
export type Path = readonly (string | number)[];

/**
 * One problem found by {@link validate}.
 *
 * @example
 * ```ts
 * import type { Issue } from "@anubis/core/schema";
 * const issue: Issue = { path: ["name"], message: "expected a string" };
 * ```
 */
export interface Issue {
  /** Where in the value the problem is. */
  path: Path;
  /** What is wrong. */
  message: string;
}

/**
 * A validator for values of type `T`.
 *
 * @example
 * ```ts
 * import * as s from "@anubis/core/schema";
 * import assert from "node:assert/strict";
 * const schema: s.Schema<string> = s.string();
 * assert.equal(schema.kind, "string");
 * ```
 */
export interface Schema<T = unknown> {
  /** The kind of schema, for introspection. */
  readonly kind: string;
  /** Pushes the problems of `value` at `path` onto `issues`. */
  check(value: unknown, path: Path, issues: Issue[]): void;
  /** Phantom field carrying the validated type. */
  readonly _type?: T;
}

/**
 * The type a schema validates.
 *
 * @example
 * ```ts
 * import * as s from "@anubis/core/schema";
 * const point = s.object({ x: s.number(), y: s.number() });
 * type Point = s.Infer<typeof point>;
 * const p: Point = { x: 1, y: 2 };
 * ```
 */
export type Infer<S> = S extends Schema<infer T> ? T : never;

/**
 * The outcome of {@link validate}.
 *
 * @example
 * ```ts
 * import * as s from "@anubis/core/schema";
 * import assert from "node:assert/strict";
 * const result: s.ValidationResult<string> = s.validate(s.string(), "x");
 * assert(result.ok);
 * assert.equal(result.value, "x");
 * ```
 */
export type ValidationResult<T> = { ok: true; value: T } | { ok: false; issues: Issue[] };

/**
 * Validates a value against a schema.
 *
 * @param schema The schema.
 * @param value The value.
 * @returns `{ ok: true, value }` or `{ ok: false, issues }`.
 *
 * @example
 * ```ts
 * import * as s from "@anubis/core/schema";
 * import assert from "node:assert/strict";
 * const result = s.validate(s.integer({ minimum: 0 }), -1);
 * assert(!result.ok);
 * assert.equal(s.formatIssues(result.issues), "must be >= 0");
 * ```
 */
export function validate<T>(schema: Schema<T>, value: unknown): ValidationResult<T> {
  const issues: Issue[] = [];
  schema.check(value, HERE, issues);
  return issues.length === 0 ? { ok: true, value: value as T } : { ok: false, issues };
}

/**
 * The issues {@link validate} would find, or `undefined` when there are none:
 * the same check without a result object or an issues array per call, for a
 * check made on every request. The array returned is the caller's.
 *
 * @param schema The schema.
 * @param value The value.
 * @returns The issues, or `undefined` when the value is valid.
 *
 * @example
 * ```ts
 * import * as s from "@anubis/core/schema";
 * import assert from "node:assert/strict";
 * const point = s.object({ x: s.number() });
 * assert.equal(s.issuesOf(point, { x: 1 }), undefined);
 * assert.deepEqual(s.issuesOf(point, { x: "1" }), [
 *   { path: ["x"], message: "expected a number, got a string" },
 * ]);
 * ```
 */
export function issuesOf(schema: Schema, value: unknown): Issue[] | undefined {
  // One array serves every call: a check is synchronous, and the array is
  // emptied first (in case a check threw).
  scratch.length = 0;
  schema.check(value, HERE, scratch);
  return scratch.length === 0 ? undefined : scratch.splice(0);
}

const scratch: Issue[] = [];

/**
 * Formats issues as one readable line, `path: message; …`.
 *
 * @param issues The issues.
 * @returns The text.
 *
 * @example
 * ```ts
 * import * as s from "@anubis/core/schema";
 * import assert from "node:assert/strict";
 * assert.equal(
 *   s.formatIssues([{ path: ["a", 0], message: "expected a string" }]),
 *   "a.0: expected a string",
 * );
 * ```
 */
export function formatIssues(issues: readonly Issue[]): string {
  return issues.map((i) => (i.path.length ? `${i.path.join(".")}: ${i.message}` : i.message)).join(
    "; ",
  );
}

function describe(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

// Children are checked at a shared empty path and the parent prefixes its key
// onto only the issues they add, so the success path allocates no paths.
const HERE: Path = Object.freeze([]);

function checkAt(
  child: Schema<unknown>,
  value: unknown,
  path: Path,
  key: string | number,
  issues: Issue[],
): void {
  const before = issues.length;
  child.check(value, HERE, issues);
  for (let i = before; i < issues.length; i++) {
    issues[i] = { path: [...path, key, ...issues[i].path], message: issues[i].message };
  }
}

function schema<T>(kind: string, check: Schema<T>["check"]): Schema<T> {
  return { kind, check };
}

/**
 * Accepts any value.
 *
 * @returns The schema.
 *
 * @example
 * ```ts
 * import * as s from "@anubis/core/schema";
 * import assert from "node:assert/strict";
 * assert.equal(s.validate(s.unknown(), undefined).ok, true);
 * ```
 */
export function unknown(): Schema<unknown> {
  return schema("unknown", acceptAnything);
}

/** {@link unknown}'s check: what has it is skipped where it is known to accept anything. */
function acceptAnything(): void {}

/**
 * Options of {@link string}.
 *
 * @example
 * ```ts
 * import * as s from "@anubis/core/schema";
 * import assert from "node:assert/strict";
 * const options: s.StringOptions = { minLength: 1, maxLength: 64 };
 * assert.equal(s.validate(s.string(options), "ok").ok, true);
 * ```
 */
export interface StringOptions {
  /** Minimum length. */
  minLength?: number;
  /** Maximum length. */
  maxLength?: number;
  /** A pattern the whole string must match. */
  pattern?: RegExp;
}

/**
 * Accepts a string.
 *
 * @param options Length and pattern constraints.
 * @returns The schema.
 *
 * @example
 * ```ts
 * import * as s from "@anubis/core/schema";
 * import assert from "node:assert/strict";
 * assert.equal(s.validate(s.string({ minLength: 1 }), "").ok, false);
 * ```
 */
export function string(options: StringOptions = {}): Schema<string> {
  const { minLength, maxLength, pattern } = options;
  return schema("string", (value, path, issues) => {
    if (typeof value !== "string") {
      issues.push({ path, message: `expected a string, got ${describe(value)}` });
    } else if (minLength !== undefined && value.length < minLength) {
      issues.push({ path, message: `must have at least ${minLength} characters` });
    } else if (maxLength !== undefined && value.length > maxLength) {
      issues.push({ path, message: `must have at most ${maxLength} characters` });
    } else if (pattern && !pattern.test(value)) {
      issues.push({ path, message: `must match ${pattern}` });
    }
  });
}

/**
 * Options of {@link number} and {@link integer}.
 *
 * @example
 * ```ts
 * import * as s from "@anubis/core/schema";
 * import assert from "node:assert/strict";
 * const options: s.NumberOptions = { minimum: 0, maximum: 100 };
 * assert.equal(s.validate(s.integer(options), 101).ok, false);
 * ```
 */
export interface NumberOptions {
  /** Inclusive minimum. */
  minimum?: number;
  /** Inclusive maximum. */
  maximum?: number;
}

function numeric(kind: "number" | "integer", options: NumberOptions): Schema<number> {
  const { minimum, maximum } = options;
  return schema(kind, (value, path, issues) => {
    if (typeof value !== "number" || !Number.isFinite(value)) {
      issues.push({ path, message: `expected a number, got ${describe(value)}` });
    } else if (kind === "integer" && !Number.isInteger(value)) {
      issues.push({ path, message: "expected an integer" });
    } else if (minimum !== undefined && value < minimum) {
      issues.push({ path, message: `must be >= ${minimum}` });
    } else if (maximum !== undefined && value > maximum) {
      issues.push({ path, message: `must be <= ${maximum}` });
    }
  });
}

/**
 * Accepts a finite number.
 *
 * @param options Range constraints.
 * @returns The schema.
 *
 * @example
 * ```ts
 * import * as s from "@anubis/core/schema";
 * import assert from "node:assert/strict";
 * assert.equal(s.validate(s.number({ maximum: 1 }), 0.5).ok, true);
 * ```
 */
export function number(options: NumberOptions = {}): Schema<number> {
  return numeric("number", options);
}

/**
 * Accepts an integer.
 *
 * @param options Range constraints.
 * @returns The schema.
 *
 * @example
 * ```ts
 * import * as s from "@anubis/core/schema";
 * import assert from "node:assert/strict";
 * assert.equal(s.validate(s.integer(), 1.5).ok, false);
 * ```
 */
export function integer(options: NumberOptions = {}): Schema<number> {
  return numeric("integer", options);
}

/**
 * Accepts a boolean.
 *
 * @returns The schema.
 *
 * @example
 * ```ts
 * import * as s from "@anubis/core/schema";
 * import assert from "node:assert/strict";
 * assert.equal(s.validate(s.boolean(), "true").ok, false);
 * ```
 */
export function boolean(): Schema<boolean> {
  return schema("boolean", (value, path, issues) => {
    if (typeof value !== "boolean") {
      issues.push({ path, message: `expected a boolean, got ${describe(value)}` });
    }
  });
}

/**
 * Accepts exactly one value.
 *
 * @param expected The value.
 * @returns The schema.
 *
 * @example
 * ```ts
 * import * as s from "@anubis/core/schema";
 * import assert from "node:assert/strict";
 * assert.equal(s.validate(s.literal("text"), "text").ok, true);
 * ```
 */
export function literal<const T extends string | number | boolean | null>(expected: T): Schema<T> {
  return schema("literal", (value, path, issues) => {
    if (value !== expected) {
      issues.push({ path, message: `expected ${JSON.stringify(expected)}` });
    }
  });
}

/**
 * Accepts one of a fixed set of strings.
 *
 * @param values The allowed strings.
 * @returns The schema.
 *
 * @example
 * ```ts
 * import * as s from "@anubis/core/schema";
 * import assert from "node:assert/strict";
 * assert.equal(s.validate(s.enumeration(["user", "assistant"]), "system").ok, false);
 * ```
 */
export function enumeration<const T extends string>(values: readonly T[]): Schema<T> {
  const allowed = new Set<string>(values);
  return schema("enum", (value, path, issues) => {
    if (typeof value !== "string" || !allowed.has(value)) {
      issues.push({ path, message: `expected one of ${values.map((v) => `"${v}"`).join(", ")}` });
    }
  });
}

/**
 * Options of {@link array}.
 *
 * @example
 * ```ts
 * import * as s from "@anubis/core/schema";
 * import assert from "node:assert/strict";
 * const options: s.ArrayOptions = { minItems: 1 };
 * assert.equal(s.validate(s.array(s.string(), options), []).ok, false);
 * ```
 */
export interface ArrayOptions {
  /** Minimum number of items. */
  minItems?: number;
}

/**
 * Accepts an array whose items all match a schema.
 *
 * @param item The item schema.
 * @param options Size constraints.
 * @returns The schema.
 *
 * @example
 * ```ts
 * import * as s from "@anubis/core/schema";
 * import assert from "node:assert/strict";
 * assert.equal(s.validate(s.array(s.string()), ["a", 2]).ok, false);
 * ```
 */
export function array<T>(item: Schema<T>, options: ArrayOptions = {}): Schema<T[]> {
  return schema("array", (value, path, issues) => {
    if (!Array.isArray(value)) {
      issues.push({ path, message: `expected an array, got ${describe(value)}` });
      return;
    }
    if (options.minItems !== undefined && value.length < options.minItems) {
      issues.push({ path, message: `must have at least ${options.minItems} items` });
    }
    for (let i = 0; i < value.length; i++) checkAt(item, value[i], path, i, issues);
  });
}

/**
 * Accepts an object whose values all match a schema.
 *
 * @param value The value schema.
 * @returns The schema.
 *
 * @example
 * ```ts
 * import * as s from "@anubis/core/schema";
 * import assert from "node:assert/strict";
 * assert.equal(s.validate(s.record(s.number()), { a: 1, b: "2" }).ok, false);
 * ```
 */
export function record<T>(value: Schema<T>): Schema<Record<string, T>> {
  // Values of any kind need no walk over the keys (`arguments`, capabilities).
  const anyValue = value.check === acceptAnything;
  return schema("record", (input, path, issues) => {
    if (typeof input !== "object" || input === null || Array.isArray(input)) {
      issues.push({ path, message: `expected an object, got ${describe(input)}` });
      return;
    }
    if (anyValue) return;
    for (const key in input) {
      checkAt(value, (input as Record<string, unknown>)[key], path, key, issues);
    }
  });
}

/**
 * Marks an object property as optional; see {@link optional}.
 *
 * @example
 * ```ts
 * import * as s from "@anubis/core/schema";
 * import assert from "node:assert/strict";
 * const cursor: s.OptionalSchema<string> = s.optional(s.string());
 * assert.equal(s.validate(s.object({ cursor }), {}).ok, true);
 * ```
 */
export interface OptionalSchema<T> extends Schema<T | undefined> {
  /** Always `true`. */
  readonly optional: true;
  /** The schema of the value when present. */
  readonly inner: Schema<T>;
}

/**
 * Marks an object property as optional: absent (or `undefined`) passes,
 * anything else must match `inner`.
 *
 * @param inner The schema of the value when present.
 * @returns The optional schema.
 *
 * @example
 * ```ts
 * import * as s from "@anubis/core/schema";
 * import assert from "node:assert/strict";
 * const schema = s.object({ cursor: s.optional(s.string()) });
 * assert.equal(s.validate(schema, {}).ok, true);
 * ```
 */
export function optional<T>(inner: Schema<T>): OptionalSchema<T> {
  return {
    kind: "optional",
    optional: true,
    inner,
    check(value, path, issues) {
      if (value !== undefined) inner.check(value, path, issues);
    },
  };
}

/**
 * A map of property names to schemas.
 *
 * @example
 * ```ts
 * import * as s from "@anubis/core/schema";
 * import assert from "node:assert/strict";
 * const shape: s.Shape = { name: s.string(), cursor: s.optional(s.string()) };
 * assert.deepEqual(Object.keys(s.object(shape).shape), ["name", "cursor"]);
 * ```
 */
export type Shape = Record<string, Schema<unknown>>;

/**
 * The keys of a shape whose schemas are optional.
 *
 * @example
 * ```ts
 * import * as s from "@anubis/core/schema";
 * const shape = { name: s.string(), cursor: s.optional(s.string()) };
 * const key: s.OptionalKeys<typeof shape> = "cursor";
 * ```
 */
export type OptionalKeys<S extends Shape> = {
  [K in keyof S]: S[K] extends OptionalSchema<unknown> ? K : never;
}[keyof S];

/**
 * The object type described by a {@link Shape}.
 *
 * @example
 * ```ts
 * import * as s from "@anubis/core/schema";
 * const shape = { name: s.string(), cursor: s.optional(s.string()) };
 * const value: s.ObjectOf<typeof shape> = { name: "echo" };
 * ```
 */
export type ObjectOf<S extends Shape> =
  & { [K in Exclude<keyof S, OptionalKeys<S>>]: Infer<S[K]> }
  & { [K in OptionalKeys<S>]?: Infer<S[K]> };

/**
 * An object schema, whose shape can be read and extended.
 *
 * @example
 * ```ts
 * import * as s from "@anubis/core/schema";
 * import assert from "node:assert/strict";
 * const tool: s.ObjectSchema<{ name: s.Schema<string> }> = s.object({ name: s.string() });
 * assert.deepEqual(Object.keys(tool.shape), ["name"]);
 * ```
 */
export interface ObjectSchema<S extends Shape> extends Schema<ObjectOf<S>> {
  /** The property schemas. */
  readonly shape: S;
  /** Whether unknown keys are rejected. */
  readonly strict: boolean;
}

function objectSchema<S extends Shape>(shape: S, strict: boolean): ObjectSchema<S> {
  const keys = Object.keys(shape);
  const properties = Object.values(shape);
  // A property of any kind needs no check beyond its presence (a `_meta` checked apart).
  const checked = properties.map((property) => property.check !== acceptAnything);
  return {
    kind: "object",
    shape,
    strict,
    check(value, path, issues) {
      if (typeof value !== "object" || value === null || Array.isArray(value)) {
        issues.push({ path, message: `expected an object, got ${describe(value)}` });
        return;
      }
      const input = value as Record<string, unknown>;
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i], property = properties[i];
        const v = input[key];
        if (v === undefined && !(property as Partial<OptionalSchema<unknown>>).optional) {
          issues.push({ path: [...path, key], message: "is required" });
        } else if (checked[i]) {
          checkAt(property, v, path, key, issues);
        }
      }
      if (strict) {
        for (const key in input) {
          if (!(key in shape)) issues.push({ path: [...path, key], message: "is not allowed" });
        }
      }
    },
  };
}

/**
 * Accepts an object with the given properties; unknown keys are allowed.
 *
 * @param shape The property schemas; wrap optional ones in {@link optional}.
 * @returns The schema.
 *
 * @example
 * ```ts
 * import * as s from "@anubis/core/schema";
 * import assert from "node:assert/strict";
 * const schema = s.object({ uri: s.string() });
 * assert.equal(s.validate(schema, { uri: "file:///a", extra: 1 }).ok, true);
 * ```
 */
export function object<S extends Shape>(shape: S): ObjectSchema<S> {
  return objectSchema(shape, false);
}

/**
 * Accepts an object with the given properties and no others.
 *
 * @param shape The property schemas.
 * @returns The schema.
 *
 * @example
 * ```ts
 * import * as s from "@anubis/core/schema";
 * import assert from "node:assert/strict";
 * assert.equal(s.validate(s.strictObject({}), { resultType: "complete" }).ok, false);
 * ```
 */
export function strictObject<S extends Shape>(shape: S): ObjectSchema<S> {
  return objectSchema(shape, true);
}

/**
 * Extends an object schema with more (or replaced) properties, keeping its
 * strictness.
 *
 * @param base The object schema to extend.
 * @param shape The added properties.
 * @returns The new schema.
 *
 * @example
 * ```ts
 * import * as s from "@anubis/core/schema";
 * import assert from "node:assert/strict";
 * const base = s.object({ name: s.string() });
 * const withTitle = s.extend(base, { title: s.optional(s.string()) });
 * assert.deepEqual(Object.keys(withTitle.shape), ["name", "title"]);
 * ```
 */
export function extend<S extends Shape, E extends Shape>(
  base: ObjectSchema<S>,
  shape: E,
): ObjectSchema<Omit<S, keyof E> & E> {
  return objectSchema({ ...base.shape, ...shape } as Omit<S, keyof E> & E, base.strict);
}

/**
 * Accepts a value that matches at least one of the schemas.
 *
 * @param options The alternatives.
 * @returns The schema.
 *
 * @example
 * ```ts
 * import * as s from "@anubis/core/schema";
 * import assert from "node:assert/strict";
 * const id = s.union([s.string(), s.integer()]);
 * assert.equal(s.validate(id, 3).ok, true);
 * ```
 */
export function union<T extends readonly Schema<unknown>[]>(
  options: T,
): Schema<Infer<T[number]>> {
  return schema("union", (value, path, issues) => {
    let best: Issue[] | undefined;
    for (const option of options) {
      const found: Issue[] = [];
      option.check(value, path, found);
      if (found.length === 0) return;
      if (!best || found.length < best.length) best = found;
    }
    issues.push(...(best ?? [{ path, message: "matches no alternative" }]));
  });
}

/**
 * Accepts an object whose string property `key` selects the schema it must
 * match.
 *
 * @param key The discriminating property.
 * @param variants A schema per value of `key`.
 * @returns The schema.
 *
 * @example
 * ```ts
 * import * as s from "@anubis/core/schema";
 * import assert from "node:assert/strict";
 * const content = s.discriminated("type", {
 *   text: s.object({ type: s.literal("text"), text: s.string() }),
 * });
 * assert.equal(s.validate(content, { type: "image" }).ok, false);
 * ```
 */
export function discriminated<V extends Record<string, Schema<unknown>>>(
  key: string,
  variants: V,
): Schema<Infer<V[keyof V]>> {
  const names = Object.keys(variants);
  return schema("discriminated", (value, path, issues) => {
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      issues.push({ path, message: `expected an object, got ${describe(value)}` });
      return;
    }
    const tag = (value as Record<string, unknown>)[key];
    const variant = typeof tag === "string" && Object.hasOwn(variants, tag)
      ? variants[tag]
      : undefined;
    if (!variant) {
      issues.push({
        path: [...path, key],
        message: `expected one of ${names.map((n) => `"${n}"`).join(", ")}`,
      });
      return;
    }
    variant.check(value, path, issues);
  });
}

/**
 * Accepts `null` or a value matching `inner`.
 *
 * @param inner The schema of non-null values.
 * @returns The schema.
 *
 * @example
 * ```ts
 * import * as s from "@anubis/core/schema";
 * import assert from "node:assert/strict";
 * assert.equal(s.validate(s.nullable(s.number()), null).ok, true);
 * ```
 */
export function nullable<T>(inner: Schema<T>): Schema<T | null> {
  return schema("nullable", (value, path, issues) => {
    if (value !== null) inner.check(value, path, issues);
  });
}

/**
 * Defers building a schema until it is first used, for recursive shapes.
 *
 * @param build Returns the schema.
 * @returns The schema.
 *
 * @example
 * ```ts
 * import * as s from "@anubis/core/schema";
 * import assert from "node:assert/strict";
 * type Tree = { children?: Tree[] };
 * const tree: s.Schema<Tree> = s.lazy(() => s.object({ children: s.optional(s.array(tree)) }));
 * assert.equal(s.validate(tree, { children: [{}] }).ok, true);
 * ```
 */
export function lazy<T>(build: () => Schema<T>): Schema<T> {
  let built: Schema<T> | undefined;
  return schema("lazy", (value, path, issues) => {
    built ??= build();
    built.check(value, path, issues);
  });
}

/**
 * Adds a custom check on top of a schema; `refine` returns an error message
 * or `undefined`. It runs only when the base schema passes.
 *
 * @param base The base schema.
 * @param refine The extra check.
 * @returns The schema.
 *
 * @example
 * ```ts
 * import * as s from "@anubis/core/schema";
 * import assert from "node:assert/strict";
 * const even = s.refine(s.integer(), (n) => (n % 2 === 0 ? undefined : "must be even"));
 * assert.equal(s.validate(even, 3).ok, false);
 * ```
 */
export function refine<T>(base: Schema<T>, refine: (value: T) => string | undefined): Schema<T> {
  return schema(base.kind, (value, path, issues) => {
    const before = issues.length;
    base.check(value, path, issues);
    if (issues.length !== before) return;
    const message = refine(value as T);
    if (message) issues.push({ path, message });
  });
}
