import assert from "node:assert/strict";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { ACCEPTED, checkContent, requestedSchemas } from "./_elicitation_check.ts";

// Titled enums (`oneOf`/`anyOf` of `const`s) are outside the built-in subset: Ajv compiles them.
function titledSchema(variant: number): Record<string, unknown> {
  const options = (titles: string[]) => titles.map((title, i) => ({ const: `v${i}`, title }));
  return {
    type: "object",
    properties: {
      [`single${variant}`]: { type: "string", oneOf: options(["a", "b", "c"]) },
      multi: { type: "array", items: { anyOf: options(["x", "y"]) } },
    },
  };
}

const ask = (requestedSchema: Record<string, unknown>) => ({ message: "m", requestedSchema });

Deno.test("checkContent: fresh but equal inline schemas compile once, in any key order", async () => {
  const before = requestedSchemas.compiles;
  for (let i = 0; i < 200; i++) {
    const schema = titledSchema(-1);
    const reordered = i % 2 ? schema : Object.fromEntries(Object.entries(schema).reverse());
    assert.deepEqual(
      await checkContent(ask(reordered), { action: "accept", content: { "single-1": "v0" } }),
      { ok: true, value: { "single-1": "v0" } },
    );
    const bad = await checkContent(ask(titledSchema(-1)), {
      action: "accept",
      content: { "single-1": "v9" },
    });
    assert.equal(bad.ok, false);
  }
  assert.equal(requestedSchemas.compiles - before, 1);
});

Deno.test("checkContent: only an accepted form answer compiles anything", () => {
  const before = requestedSchemas.compiles;
  assert.equal(checkContent(ask(titledSchema(-2)), { action: "decline" }), ACCEPTED);
  assert.equal(checkContent(ask(titledSchema(-2)), { action: "cancel" }), ACCEPTED);
  assert.equal(
    checkContent({ mode: "url", message: "m", url: "https://example.com" }, { action: "accept" }),
    ACCEPTED,
  );
  assert.equal(requestedSchemas.compiles, before);
});

Deno.test("checkContent: schemas past the LRU bound are freed, Ajv keeps none of them", async () => {
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc") as () => void;
  const collected = new Set<number>();
  const registry = new FinalizationRegistry<number>((variant) => collected.add(variant));
  const distinct = 1_000;
  const compiled = requestedSchemas.compiles;
  for (let variant = 0; variant < distinct; variant++) {
    const schema = titledSchema(variant);
    registry.register(schema, variant);
    const checked = await checkContent(ask(schema), {
      action: "accept",
      content: { [`single${variant}`]: "v1" },
    });
    assert.equal(checked.ok, true);
  }
  assert.equal(requestedSchemas.compiles - compiled, distinct);
  assert.ok(requestedSchemas.size <= 64);
  for (let i = 0; i < 5 && collected.size < distinct - 64; i++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  // Everything but the cache's last 64 can go (a few may wait for a later collection).
  assert.ok(collected.size >= distinct - 64 - 50, `only ${collected.size} of ${distinct} freed`);
  for (let variant = 0; variant < distinct - 64; variant += 97) {
    // Evicted schemas recompile, and still validate.
    const checked = await checkContent(ask(titledSchema(variant)), {
      action: "accept",
      content: { [`single${variant}`]: "nope" },
    });
    assert.equal(checked.ok, false);
  }
});
