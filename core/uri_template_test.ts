import assert from "node:assert/strict";
import { UriTemplate } from "./uri_template.ts";

Deno.test("level 1 templates match and expand", () => {
  const t = new UriTemplate("test://template/{id}/data");
  assert.deepEqual(t.variables, ["id"]);
  assert.deepEqual(t.match("test://template/123/data"), { id: "123" });
  assert.equal(t.match("test://template/1/2/data"), undefined);
  assert.equal(t.match("test://other/123/data"), undefined);
  assert.equal(t.expand({ id: "a b/c" }), "test://template/a%20b%2Fc/data");
  assert.deepEqual(t.match(t.expand({ id: "a b/c" })), { id: "a b/c" });
});

Deno.test("level 2 reserved and fragment expansion", () => {
  const t = new UriTemplate("file:///{+path}");
  assert.deepEqual(t.match("file:///a/b/c.txt"), { path: "a/b/c.txt" });
  assert.equal(t.expand({ path: "a/b c" }), "file:///a/b%20c");
  const f = new UriTemplate("doc://x{#section}");
  assert.deepEqual(f.match("doc://x#intro"), { section: "intro" });
});

Deno.test("templates beyond level 2 are refused", () => {
  assert.throws(() => new UriTemplate("x://{?q}"), TypeError);
  assert.throws(() => new UriTemplate("x://{a"), TypeError);
});
