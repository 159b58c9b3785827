import assert from "node:assert/strict";
import * as s from "./schema.ts";
import { defaultsFiller } from "./json_schema.ts";

Deno.test("object schemas require fields, keep unknown keys and report paths", () => {
  const schema = s.object({ name: s.string(), args: s.optional(s.record(s.unknown())) });
  assert.deepEqual(s.validate(schema, { name: "x", extra: 1 }), {
    ok: true,
    value: { name: "x", extra: 1 },
  });
  assert.deepEqual(s.validate(schema, { args: [] }), {
    ok: false,
    issues: [
      { path: ["name"], message: "is required" },
      { path: ["args"], message: "expected an object, got an array" },
    ],
  });
});

Deno.test("strict objects reject unknown keys", () => {
  const result = s.validate(s.strictObject({}), { resultType: "complete" });
  assert.deepEqual(result, {
    ok: false,
    issues: [{ path: ["resultType"], message: "is not allowed" }],
  });
});

Deno.test("scalars, enums, unions, discriminated unions and refinements", () => {
  assert.equal(s.validate(s.integer({ minimum: 0 }), 1.5).ok, false);
  assert.equal(s.validate(s.number(), Number.NaN).ok, false);
  assert.equal(s.validate(s.enumeration(["a", "b"]), "c").ok, false);
  assert.equal(s.validate(s.union([s.string(), s.integer()]), 2).ok, true);
  const content = s.discriminated("type", {
    text: s.object({ type: s.literal("text"), text: s.string() }),
  });
  assert.deepEqual(s.validate(content, { type: "text" }), {
    ok: false,
    issues: [{ path: ["text"], message: "is required" }],
  });
  assert.equal(s.validate(s.array(s.string(), { minItems: 1 }), []).ok, false);
  assert.equal(s.validate(s.nullable(s.string()), null).ok, true);
  const even = s.refine(s.integer(), (n) => (n % 2 ? "odd" : undefined));
  assert.deepEqual(s.validate(even, 3), { ok: false, issues: [{ path: [], message: "odd" }] });
  assert.equal(
    s.formatIssues([{ path: ["a", 1], message: "m" }, { path: [], message: "n" }]),
    "a.1: m; n",
  );
});

Deno.test("extend keeps strictness and adds properties", () => {
  const base = s.strictObject({ a: s.string() });
  const extended = s.extend(base, { b: s.optional(s.number()) });
  assert.equal(extended.strict, true);
  assert.equal(s.validate(extended, { a: "x", b: 1 }).ok, true);
  assert.equal(s.validate(extended, { a: "x", c: 1 }).ok, false);
});

Deno.test("nested issues carry their full path from the root", () => {
  const schema = s.object({
    a: s.array(s.object({ b: s.string() })),
    r: s.record(s.object({ n: s.number() })),
  });
  assert.deepEqual(s.validate(schema, { a: [{ b: "x" }, { b: 1 }], r: { k: { n: "1" } } }), {
    ok: false,
    issues: [
      { path: ["a", 1, "b"], message: "expected a string, got a number" },
      { path: ["r", "k", "n"], message: "expected a number, got a string" },
    ],
  });
  const issues: s.Issue[] = [];
  schema.check({ a: [{}], r: {} }, ["params"], issues);
  assert.deepEqual(issues, [{ path: ["params", "a", 0, "b"], message: "is required" }]);
});

Deno.test("defaultsFiller: a JSON Schema's defaults fill missing properties, nested too, copying only what it fills", () => {
  const fill = defaultsFiller({
    type: "object",
    properties: {
      days: { type: "integer", default: 6 },
      unit: { enum: ["C", "F"], default: "C" },
      where: {
        type: "object",
        properties: { country: { type: "string", default: "PE" }, city: { type: "string" } },
      },
      tags: { type: "array", default: [] },
    },
  })!;
  const given = { days: 2, where: { city: "Lima" } };
  const filled = fill(given);
  assert.deepEqual(filled, {
    days: 2,
    unit: "C",
    where: { city: "Lima", country: "PE" },
    tags: [],
  });
  assert.deepEqual(given, { days: 2, where: { city: "Lima" } }, "the arguments are not mutated");
  const done = { days: 1, unit: "F", tags: ["x"] };
  assert.equal(fill(done), done, "nothing to fill: the same object");
  assert.notEqual(fill({}).tags, fill({}).tags, "each call gets its own copy of a default");
  assert.equal(
    defaultsFiller({ type: "object", properties: { a: { type: "string" } } }),
    undefined,
  );
});
