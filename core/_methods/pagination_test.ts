import assert from "node:assert/strict";
import { McpError } from "../errors.ts";
import { paginate } from "./pagination.ts";

Deno.test("paginate walks a list page by page", () => {
  const items = [1, 2, 3, 4, 5];
  const first = paginate(items, undefined, 2);
  assert.deepEqual(first.items, [1, 2]);
  const second = paginate(items, first.nextCursor, 2);
  assert.deepEqual(second.items, [3, 4]);
  const third = paginate(items, second.nextCursor, 2);
  assert.deepEqual(third, { items: [5] });
});

Deno.test("a cursor this server did not issue is -32602", () => {
  for (const cursor of ["garbage", "o1.!!", "o1." + btoa("99"), "o1." + btoa("-1"), ""]) {
    assert.throws(
      () => paginate([1, 2, 3], cursor, 2),
      (e) => e instanceof McpError && e.code === -32602,
    );
  }
  assert.throws(() => paginate([1], "x", undefined), McpError);
  assert.deepEqual(paginate([1, 2], undefined, undefined), { items: [1, 2] });
});
