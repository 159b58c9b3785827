/**
 * The engine answers a tool that answers at once without waiting a turn per
 * layer; these pin that every way a handler can end is answered the same
 * whether it is synchronous or not, in both eras.
 */

import assert from "node:assert/strict";
import { ErrorCode, McpError } from "@anubis/core";
import { engineHarness, META } from "../helpers/engine_harness.ts";

const kinds = {
  sync: <T>(value: () => T) => value(),
  async: async <T>(value: () => T) => {
    await new Promise((resolve) => setTimeout(resolve, 1));
    return value();
  },
};

for (const [kind, run] of Object.entries(kinds)) {
  const tools = [
    { name: "ok", handler: () => run(() => "fine") },
    {
      name: "fails",
      handler: () =>
        run(() => {
          throw new Error("broke");
        }),
    },
    {
      name: "refuses",
      handler: () =>
        run(() => {
          throw new McpError(ErrorCode.INVALID_PARAMS, "not like that");
        }),
    },
    { name: "nothing", handler: () => run(() => 42 as unknown as string) },
    {
      // Structured output alone gets a text copy; a BigInt cannot be written as JSON.
      name: "unwritable",
      handler: () => run(() => ({ structuredContent: { n: 1n } }) as unknown as string),
    },
    {
      name: "trap",
      handler: () =>
        run(() =>
          ({
            get then() {
              throw new Error("no then here");
            },
          }) as unknown as string
        ),
    },
    {
      name: "typed",
      outputSchema: { type: "object", properties: { n: { type: "integer" } }, required: ["n"] },
      handler: (args: { n?: unknown }) =>
        run(() => ({ content: [], structuredContent: { n: args.n } })),
    },
  ];

  Deno.test(`${kind === "sync" ? "a synchronous" : "an asynchronous"} tool: result, thrown error, McpError, bad or unreadable result, output schema`, async () => {
    const t = engineHarness({ tools });
    await t.initialize();
    for (const params of [{}, { _meta: META }]) {
      const call = (name: string, args?: Record<string, unknown>) =>
        t.request("tools/call", { name, arguments: args, ...params });
      assert.deepEqual((await call("ok")).result.content, [{ type: "text", text: "fine" }]);
      const failed = (await call("fails")).result;
      assert.equal(failed.isError, true);
      assert.deepEqual(failed.content, [{ type: "text", text: "broke" }]);
      assert.deepEqual((await call("refuses")).error, {
        code: ErrorCode.INVALID_PARAMS,
        message: "not like that",
      });
      assert.equal((await call("nothing")).error.code, ErrorCode.INTERNAL_ERROR);
      // Failing while its result is read is still the tool's failure, not a JSON-RPC error.
      for (const [tool, text] of [["unwritable", /BigInt/], ["trap", /no then here/]] as const) {
        const { result } = await call(tool);
        assert.equal(result?.isError, true, tool);
        assert.match(result.content[0].text, text);
      }
      assert.deepEqual((await call("typed", { n: 3 })).result.structuredContent, { n: 3 });
      const mismatch = (await call("typed", { n: "three" })).error;
      assert.equal(mismatch.code, ErrorCode.INTERNAL_ERROR);
      assert.match(mismatch.message, /does not match its outputSchema/);
    }
  });
}

Deno.test("handleRequest's next() rejects (never throws) when the routing refuses", async () => {
  const t = engineHarness({
    tools: [{ name: "ok", handler: () => "fine" }],
    handleRequest: (_request, _frame, next) => {
      let promise: Promise<Record<string, unknown>>;
      try {
        promise = next();
      } catch {
        throw new McpError(ErrorCode.INTERNAL_ERROR, "next() threw");
      }
      return promise.catch((error: McpError) => {
        throw new McpError(error.code, `wrapped: ${error.message}`);
      });
    },
  });
  await t.initialize();
  for (const params of [{ name: 7 }, { name: 7, _meta: META }]) {
    const { error } = await t.request("tools/call", params);
    assert.equal(error.code, ErrorCode.INVALID_PARAMS);
    assert.match(error.message, /^wrapped: Invalid params/);
  }
  assert.deepEqual((await t.request("tools/call", { name: "ok", _meta: META })).result.content, [
    { type: "text", text: "fine" },
  ]);
});

Deno.test("a synchronous tool that asks for input without waiting for it is answered with its result", async () => {
  const t = engineHarness({
    tools: [{
      name: "impatient",
      handler: (_args: Record<string, never>, frame) => {
        void frame.elicit({
          message: "Name?",
          requestedSchema: { type: "object", properties: { name: { type: "string" } } },
        }).catch(() => {});
        return "did not wait";
      },
    }],
  });
  const reply = await t.request("tools/call", { name: "impatient", _meta: META });
  assert.equal(reply.result.resultType, "complete");
  assert.deepEqual(reply.result.content, [{ type: "text", text: "did not wait" }]);
});
