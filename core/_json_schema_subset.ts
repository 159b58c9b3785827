/**
 * A small compiler for the JSON Schema subset that tool input schemas almost
 * always use, so a tool call needs neither Ajv's import nor its compile (the
 * cost of a cold start). Schemas with any other keyword are left to Ajv; the
 * verdicts and messages follow Ajv's (`must be integer`, `must have required
 * property 'x'`).
 *
 * The subset: `type` (a name or a list, e.g. `["string", "null"]`),
 * `properties`, `required`, `additionalProperties`, `enum`, `const`, `items`
 * (one schema), `minItems`/`maxItems`, `minimum`/`maximum`,
 * `exclusiveMinimum`/`exclusiveMaximum` (numbers), `minLength`/`maxLength`,
 * `pattern`, boolean schemas, and the annotations (`title`, `description`,
 * `default`, `examples`, `format`, …).
 *
 * @module
 */

import type { Issue, Path } from "./schema.ts";

/** A compiled subset schema: pushes the issues of a value (Ajv's wording) onto `issues`. */
export type SubsetCheck = (value: unknown, issues: Issue[]) => void;

// Annotations, with the type the meta-schema gives each (Ajv rejects a
// schema where one has another type, so such a schema is left to Ajv).
const ANNOTATIONS: Readonly<Record<string, string>> = {
  title: "string",
  description: "string",
  format: "string",
  $comment: "string",
  contentMediaType: "string",
  contentEncoding: "string",
  readOnly: "boolean",
  writeOnly: "boolean",
  deprecated: "boolean",
  examples: "array",
  default: "any",
};
const KEYWORDS = new Set([
  "type",
  "properties",
  "required",
  "additionalProperties",
  "enum",
  "const",
  "items",
  "minItems",
  "maxItems",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "minLength",
  "maxLength",
  "pattern",
]);
const TYPES = new Set(["string", "number", "integer", "boolean", "object", "array", "null"]);
const HERE: Path = Object.freeze([]);

/**
 * Compiles a schema of the subset.
 *
 * @param schema A JSON Schema.
 * @returns The check, or `undefined` when the schema uses anything outside the subset.
 */
export function compileSubset(schema: unknown): SubsetCheck | undefined {
  try {
    return compile(schema);
  } catch (error) {
    if (error instanceof OutsideSubset) return undefined;
    throw error;
  }
}

class OutsideSubset extends Error {}

function outside(): never {
  throw new OutsideSubset();
}

function count(value: unknown): number {
  return typeof value === "number" && Number.isInteger(value) && value >= 0 ? value : outside();
}

function limit(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : outside();
}

function compile(schema: unknown): SubsetCheck {
  if (schema === true) return () => {};
  if (schema === false) return (_, issues) => void issues.push(issue("boolean schema is false"));
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) outside();
  const s = schema as Record<string, unknown>;
  for (const key in s) if (!KEYWORDS.has(key) && !isAnnotation(key, s[key])) outside();
  const checks: SubsetCheck[] = [];
  const types = typeNames(s.type);
  if (types) checks.push(typeCheck(types));
  if (s.enum !== undefined) {
    const allowed = Array.isArray(s.enum) ? s.enum : outside();
    checks.push((value, issues) => {
      if (!allowed.some((a) => deepEqual(a, value))) {
        issues.push(issue("must be equal to one of the allowed values"));
      }
    });
  }
  if ("const" in s) {
    const expected = s.const;
    checks.push((value, issues) => {
      if (!deepEqual(expected, value)) issues.push(issue("must be equal to constant"));
    });
  }
  numberChecks(s, checks);
  stringChecks(s, checks);
  arrayChecks(s, checks);
  objectChecks(s, checks);
  if (checks.length === 1) return checks[0];
  // Like Ajv, every keyword runs; those of one type skip values of another.
  return (value, issues) => {
    for (let i = 0; i < checks.length; i++) checks[i](value, issues);
  };
}

function isAnnotation(key: string, value: unknown): boolean {
  const type = Object.hasOwn(ANNOTATIONS, key) ? ANNOTATIONS[key] : undefined;
  if (type === "array") return Array.isArray(value);
  return type === "any" || (type !== undefined && typeof value === type);
}

function typeNames(type: unknown): string[] | undefined {
  if (type === undefined) return undefined;
  const names = typeof type === "string" ? [type] : Array.isArray(type) ? type : outside();
  if (names.length === 0 || !names.every((n) => typeof n === "string" && TYPES.has(n))) outside();
  return names as string[];
}

function typeCheck(types: string[]): SubsetCheck {
  const message = `must be ${types.join(",")}`;
  return (value, issues) => {
    for (const type of types) if (isType(type, value)) return;
    issues.push(issue(message));
  };
}

function isType(type: string, value: unknown): boolean {
  switch (type) {
    case "object":
      return typeof value === "object" && value !== null && !Array.isArray(value);
    case "array":
      return Array.isArray(value);
    case "null":
      return value === null;
    case "integer":
      return Number.isInteger(value);
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    case "string":
      return typeof value === "string";
    default:
      return typeof value === "boolean";
  }
}

function numberChecks(s: Record<string, unknown>, checks: SubsetCheck[]): void {
  const bounds: [string, (v: number, b: number) => boolean, string][] = [
    ["maximum", (v, b) => v <= b, "<="],
    ["minimum", (v, b) => v >= b, ">="],
    ["exclusiveMaximum", (v, b) => v < b, "<"],
    ["exclusiveMinimum", (v, b) => v > b, ">"],
  ];
  for (const [keyword, holds, sign] of bounds) {
    if (s[keyword] === undefined) continue;
    const bound = limit(s[keyword]);
    const message = `must be ${sign} ${bound}`;
    checks.push((value, issues) => {
      if (typeof value === "number" && !holds(value, bound)) issues.push(issue(message));
    });
  }
}

function stringChecks(s: Record<string, unknown>, checks: SubsetCheck[]): void {
  if (s.maxLength !== undefined) {
    const max = count(s.maxLength);
    checks.push((value, issues) => {
      if (typeof value === "string" && codePoints(value) > max) {
        issues.push(issue(`must NOT have more than ${max} characters`));
      }
    });
  }
  if (s.minLength !== undefined) {
    const min = count(s.minLength);
    checks.push((value, issues) => {
      if (typeof value === "string" && codePoints(value) < min) {
        issues.push(issue(`must NOT have fewer than ${min} characters`));
      }
    });
  }
  if (s.pattern !== undefined) {
    const source = typeof s.pattern === "string" ? s.pattern : outside();
    let regexp: RegExp;
    try {
      regexp = new RegExp(source, "u");
    } catch {
      outside(); // Ajv reports the bad pattern when it compiles the schema.
    }
    const message = `must match pattern "${source}"`;
    checks.push((value, issues) => {
      if (typeof value === "string" && !regexp.test(value)) issues.push(issue(message));
    });
  }
}

function arrayChecks(s: Record<string, unknown>, checks: SubsetCheck[]): void {
  if (s.maxItems !== undefined) {
    const max = count(s.maxItems);
    checks.push((value, issues) => {
      if (Array.isArray(value) && value.length > max) {
        issues.push(issue(`must NOT have more than ${max} items`));
      }
    });
  }
  if (s.minItems !== undefined) {
    const min = count(s.minItems);
    checks.push((value, issues) => {
      if (Array.isArray(value) && value.length < min) {
        issues.push(issue(`must NOT have fewer than ${min} items`));
      }
    });
  }
  if (s.items !== undefined) {
    if (Array.isArray(s.items)) outside();
    const item = compile(s.items);
    checks.push((value, issues) => {
      if (!Array.isArray(value)) return;
      for (let i = 0; i < value.length; i++) checkAt(item, value[i], i, issues);
    });
  }
}

function objectChecks(s: Record<string, unknown>, checks: SubsetCheck[]): void {
  const isObject = (value: unknown): value is Record<string, unknown> =>
    typeof value === "object" && value !== null && !Array.isArray(value);
  if (s.required !== undefined) {
    const required = Array.isArray(s.required) && s.required.every((r) => typeof r === "string")
      ? s.required as string[]
      : outside();
    checks.push((value, issues) => {
      if (!isObject(value)) return;
      for (const key of required) {
        if (value[key] === undefined) issues.push(issue(`must have required property '${key}'`));
      }
    });
  }
  const properties = s.properties === undefined
    ? {}
    : typeof s.properties === "object" && s.properties !== null && !Array.isArray(s.properties)
    ? s.properties as Record<string, unknown>
    : outside();
  const names = Object.keys(properties);
  const compiled = names.map((name) => compile(properties[name]));
  if (names.length > 0) {
    checks.push((value, issues) => {
      if (!isObject(value)) return;
      for (let i = 0; i < names.length; i++) {
        const v = value[names[i]];
        if (v !== undefined) checkAt(compiled[i], v, names[i], issues);
      }
    });
  }
  if (s.additionalProperties !== undefined) {
    const known = new Set(names);
    const extra = s.additionalProperties === false ? undefined : compile(s.additionalProperties);
    checks.push((value, issues) => {
      if (!isObject(value)) return;
      for (const key in value) {
        if (known.has(key)) continue;
        if (!extra) issues.push(issue("must NOT have additional properties"));
        else checkAt(extra, value[key], key, issues);
      }
    });
  }
}

function issue(message: string): Issue {
  return { path: HERE, message };
}

// Checks a child at a relative path; only the issues it adds get the key.
function checkAt(child: SubsetCheck, value: unknown, key: string | number, issues: Issue[]) {
  const before = issues.length;
  child(value, issues);
  for (let i = before; i < issues.length; i++) {
    issues[i] = { path: [key, ...issues[i].path], message: issues[i].message };
  }
}

// Ajv counts string length in code points, not UTF-16 units.
function codePoints(text: string): number {
  let length = text.length;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        length--;
        i++;
      }
    }
  }
  return length;
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) {
    return a !== a && b !== b; // NaN
  }
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const other = b as unknown[];
    return a.length === other.length && a.every((v, i) => deepEqual(v, other[i]));
  }
  const ka = Object.keys(a), kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  return ka.every((k) =>
    Object.hasOwn(b, k) &&
    deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])
  );
}
