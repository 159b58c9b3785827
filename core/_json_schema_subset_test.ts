import assert from "node:assert/strict";
import Ajv2020 from "ajv/dist/2020.js";
import { compileSubset } from "./_json_schema_subset.ts";
import { compileValidator, type JsonSchema } from "./json_schema.ts";
import type { Issue } from "./schema.ts";

const ajv = new (Ajv2020 as unknown as new (o: object) => {
  compile(s: unknown): ((v: unknown) => boolean) & {
    errors?: { instancePath: string; message?: string }[] | null;
  };
})({ strict: false, allErrors: true, validateFormats: false });

const VALUES: unknown[] = [
  null,
  true,
  false,
  0,
  1,
  -1,
  1.5,
  10,
  100,
  "",
  "a",
  "abc",
  "abcdefghijk",
  "😀😀",
  "red",
  "x1",
  [],
  [1],
  [1, "a"],
  ["a", "b", "c", "d"],
  [{ a: 1 }],
  {},
  { name: "x" },
  { name: 1 },
  { name: "x", age: 3 },
  { name: "x", age: -3 },
  { name: "x", age: 3.5 },
  { name: "x", extra: true },
  { name: "x", tags: ["a", 1] },
  { name: null },
  { nested: { a: "b" } },
  { nested: { a: 1 } },
  { nested: {} },
];

const SCHEMAS: JsonSchema[] = [
  {},
  { type: "string" },
  { type: "number" },
  { type: "integer" },
  { type: "boolean" },
  { type: "null" },
  { type: "array" },
  { type: "object" },
  { type: ["string", "null"] },
  { type: ["integer", "string"] },
  { enum: ["red", "green", 1, null, [1], { a: 1 }] },
  { const: "red" },
  { const: { name: "x" } },
  { const: [1, "a"] },
  { type: "number", minimum: 0, maximum: 10 },
  { type: "number", exclusiveMinimum: 0, exclusiveMaximum: 10 },
  { minimum: 1 },
  { type: "string", minLength: 2, maxLength: 10 },
  { type: "string", maxLength: 1 },
  { minLength: 1 },
  { type: "string", pattern: "^[a-z]+$" },
  { pattern: "\\d" },
  { type: "string", format: "email", description: "annotated", title: "t", default: "a" },
  { type: "array", items: { type: "integer" } },
  { type: "array", items: { type: "string" }, minItems: 1, maxItems: 3 },
  { items: { type: "object", required: ["a"] } },
  { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
  {
    type: "object",
    properties: {
      name: { type: "string", minLength: 1 },
      age: { type: "integer", minimum: 0 },
      tags: { type: "array", items: { type: "string" } },
    },
    required: ["name"],
    additionalProperties: false,
  },
  { type: "object", properties: { name: { type: "string" } }, additionalProperties: false },
  { type: "object", additionalProperties: { type: "string" } },
  { type: "object", properties: { name: { type: ["string", "null"] } } },
  {
    type: "object",
    properties: {
      nested: {
        type: "object",
        properties: { a: { type: "string" } },
        required: ["a"],
        additionalProperties: false,
      },
    },
  },
  { required: ["name"] },
  { type: "object", properties: { name: true, age: false } },
  { type: "object", properties: { toString: { type: "string" } } },
  { type: "object", required: ["toString"] },
];

Deno.test("the built-in subset gives Ajv's verdict on every schema × value", () => {
  for (const schema of SCHEMAS) {
    const check = compileSubset(schema);
    assert.ok(check, `in the subset: ${JSON.stringify(schema)}`);
    const reference = ajv.compile(schema);
    for (const value of VALUES) {
      const issues: Issue[] = [];
      check(value, issues);
      assert.equal(
        issues.length === 0,
        reference(value),
        `${JSON.stringify(schema)} on ${JSON.stringify(value)}: ${JSON.stringify(issues)}`,
      );
    }
  }
});

Deno.test("the built-in subset words its issues as Ajv does, with the failing property", async () => {
  const schema = SCHEMAS[27];
  const validate = compileValidator(schema);
  const reference = ajv.compile(schema);
  for (const value of [{}, { name: "", age: -1 }, { name: "x", tags: ["a", 1] }, { a: 1 }]) {
    const ours = await validate(value);
    reference(value);
    const theirs = (reference.errors ?? []).map((e) => {
      const path = e.instancePath.slice(1).replaceAll("/", ".");
      return path ? `${path}: ${e.message}` : e.message;
    });
    assert.equal(ours.ok, false);
    assert.deepEqual(
      new Set((ours as { message: string }).message.split("; ")),
      new Set(theirs),
    );
  }
});

Deno.test("schemas outside the subset are left to Ajv", async () => {
  for (
    const schema of [
      { $ref: "#/$defs/a", $defs: { a: { type: "string" } } },
      { anyOf: [{ type: "string" }, { type: "number" }] },
      { type: "object", patternProperties: { "^x": { type: "string" } } },
      { type: "number", multipleOf: 2 },
      { items: [{ type: "string" }] },
      { type: "strings" },
      { pattern: "(" },
      { $schema: "https://json-schema.org/draft/2020-12/schema", type: "string" },
      { type: "string", title: 5 },
      { type: "object", properties: { a: { description: ["x"] } } },
    ]
  ) {
    assert.equal(compileSubset(schema), undefined, JSON.stringify(schema));
  }
  const validate = compileValidator({ anyOf: [{ type: "string" }, { type: "number" }] });
  assert.deepEqual(await validate(1), { ok: true, value: 1 });
  assert.equal((await validate(true)).ok, false);
});
