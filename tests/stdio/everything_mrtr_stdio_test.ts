/**
 * The everything server's 2026-07-28 diagnostics on raw stdio, asserted on
 * the exact wire: multi round-trip input (keys, rounds, state binding,
 * tampering, missing, malformed and extra answers, declared capabilities),
 * request-scoped logging, and `subscriptions/listen` filtering.
 */

import assert from "node:assert/strict";
import { start, type StdioChild } from "../helpers/stdio_child.ts";

const VERSION = "2026-07-28";
const NAME_FORM = {
  method: "elicitation/create",
  params: {
    message: "What is your name?",
    requestedSchema: {
      type: "object",
      properties: { name: { type: "string" } },
      required: ["name"],
    },
  },
};
const ALICE = { action: "accept", content: { name: "Alice" } };

type Json = Record<string, unknown>;

/** Sends stateless requests with the 2026 `_meta` envelope and returns their responses. */
function statelessClient(server: StdioChild) {
  let id = 0;
  const request = async (
    method: string,
    params: Json = {},
    capabilities: Json = { elicitation: {}, sampling: {}, roots: {} },
    meta: Json = {},
  ) => {
    const requestId = ++id;
    await server.send(
      JSON.stringify({
        jsonrpc: "2.0",
        id: requestId,
        method,
        params: {
          ...params,
          _meta: {
            "io.modelcontextprotocol/protocolVersion": VERSION,
            "io.modelcontextprotocol/clientCapabilities": capabilities,
            ...meta,
          },
        },
      }) + "\n",
    );
    return await server.next((m) => m.id === requestId) as {
      result?: Json;
      error?: { code: number; message: string; data?: unknown };
    };
  };
  const callTool = (name: string, extra: Json = {}, capabilities?: Json) =>
    request("tools/call", { name, arguments: {}, ...extra }, capabilities);
  return { request, callTool };
}

const text = (result: Json | undefined) => (result!.content as { text: string }[])[0].text;

Deno.test("everything on stdio at 2026-07-28: multi round-trip input on the wire", async (t) => {
  const server = start("examples/everything.ts");
  const { request, callTool } = statelessClient(server);
  try {
    const tool = "test_input_required_result_elicitation";
    const first = (await callTool(tool)).result!;

    await t.step("round 1 asks with the fixture's key and a sealed state", () => {
      assert.equal(first.resultType, "input_required");
      assert.deepEqual(first.inputRequests, { user_name: NAME_FORM });
      assert.equal(typeof first.requestState, "string");
      assert.equal("ttlMs" in first, false);
    });

    await t.step("a wrong key or a malformed answer asks again", async () => {
      for (const inputResponses of [{ wrong_key: ALICE }, { user_name: 12345 }]) {
        const again = await callTool(tool, { inputResponses, requestState: first.requestState });
        assert.equal(again.result?.resultType, "input_required", JSON.stringify(inputResponses));
        assert.deepEqual(again.result!.inputRequests, { user_name: NAME_FORM });
      }
    });

    await t.step("inputResponses that are not an object are invalid params", async () => {
      const invalid = await callTool(tool, {
        inputResponses: null,
        requestState: first.requestState,
      });
      assert.equal(invalid.error?.code, -32602);
    });

    await t.step("the answer completes; unknown extra keys are ignored", async () => {
      const done = await callTool(tool, {
        inputResponses: { user_name: ALICE, extra_1: ALICE, extra_2: { action: "decline" } },
        requestState: first.requestState,
      });
      assert.equal(done.result!.resultType, "complete");
      assert.equal(text(done.result), "Hello, Alice!");
    });

    await t.step("a tampered state, or one of another tool, is an error", async () => {
      const tampered = await callTool(tool, {
        inputResponses: { user_name: ALICE },
        requestState: `${first.requestState}-TAMPERED`,
      });
      assert.deepEqual(tampered.error, {
        code: -32602,
        message: "requestState integrity check failed",
      });
      const elsewhere = await callTool("test_input_required_result_tampered_state", {
        inputResponses: { user_name: ALICE },
        requestState: first.requestState,
      });
      assert.deepEqual(elsewhere.error, {
        code: -32602,
        message: "requestState belongs to another request",
      });
    });

    await t.step("each sequential question is a round with a fresh state", async () => {
      const multi = "test_input_required_result_multi_round";
      const r1 = (await callTool(multi)).result!;
      assert.deepEqual(Object.keys(r1.inputRequests as Json), ["name"]);
      const r2 = (await callTool(multi, {
        inputResponses: { name: ALICE },
        requestState: r1.requestState,
      })).result!;
      assert.equal(r2.resultType, "input_required");
      assert.deepEqual(Object.keys(r2.inputRequests as Json), ["color"]);
      assert.notEqual(r2.requestState, r1.requestState);
      const r3 = await callTool(multi, {
        inputResponses: { color: { action: "accept", content: { color: "blue" } } },
        requestState: r2.requestState,
      });
      assert.equal(text(r3.result), "Alice likes blue");
    });

    await t.step("concurrent questions share one round", async () => {
      const r1 = (await callTool("test_input_required_result_multiple_inputs")).result!;
      const requests = r1.inputRequests as Record<string, { method: string }>;
      assert.deepEqual(
        Object.entries(requests).map(([key, r]) => [key, r.method]),
        [
          ["user_name", "elicitation/create"],
          ["sample_request", "sampling/createMessage"],
          ["roots_request", "roots/list"],
        ],
      );
    });

    await t.step("only declared capabilities are asked for", async () => {
      const onlySampling = await callTool("test_input_required_result_capabilities", {}, {
        sampling: {},
      });
      assert.deepEqual(Object.keys(onlySampling.result!.inputRequests as Json), [
        "sample_request",
      ]);
      const missing = await callTool("test_missing_capability", {}, {});
      assert.deepEqual(missing.error, {
        code: -32021,
        message: "The client did not declare the capability sampling/createMessage needs",
        data: { requiredCapabilities: { sampling: {} } },
      });
    });

    await t.step("prompts/get takes part too", async () => {
      const prompt = "test_input_required_result_prompt";
      const r1 = (await request("prompts/get", { name: prompt })).result!;
      assert.deepEqual(Object.keys(r1.inputRequests as Json), ["user_context"]);
      const r2 = await request("prompts/get", {
        name: prompt,
        inputResponses: { user_context: { action: "accept", content: { context: "tests" } } },
        requestState: r1.requestState,
      });
      assert.deepEqual(r2.result!.messages, [
        { role: "user", content: { type: "text", text: "Context: tests" } },
      ]);
    });
  } finally {
    const { code } = await server.close();
    assert.equal(code, 0);
  }
});

Deno.test("everything on stdio at 2026-07-28: logs and change notifications", async (t) => {
  const server = start("examples/everything.ts");
  const { request, callTool } = statelessClient(server);
  const isLog = (m: Json) => m.method === "notifications/message";
  try {
    await t.step("no log level, no logs; a level lets logs through", async () => {
      await callTool("test_logging_tool");
      await request("tools/call", { name: "test_logging_tool", arguments: {} }, {}, {
        "io.modelcontextprotocol/logLevel": "info",
      });
      // Logs of a request precede its response on stdout.
      const log = await server.next(isLog);
      assert.deepEqual(log.params, { level: "info", data: "test_logging_tool started" });
      await server.next(isLog);
      await assert.rejects(server.next(isLog, 0), /no matching message/);
    });

    await t.step("a listen stream gets its ack, then only what it asked for", async () => {
      await server.send(
        JSON.stringify({
          jsonrpc: "2.0",
          id: "listen-1",
          method: "subscriptions/listen",
          params: {
            notifications: { promptsListChanged: true },
            _meta: {
              "io.modelcontextprotocol/protocolVersion": VERSION,
              "io.modelcontextprotocol/clientCapabilities": {},
            },
          },
        }) + "\n",
      );
      const ack = await server.next((m) => m.method === "notifications/subscriptions/acknowledged");
      assert.deepEqual(ack.params, {
        _meta: { "io.modelcontextprotocol/subscriptionId": "listen-1" },
        notifications: { promptsListChanged: true },
      });
      await callTool("test_trigger_tool_change");
      await callTool("test_trigger_prompt_change");
      const changed = await server.next((m) => String(m.method).endsWith("list_changed"));
      assert.deepEqual(changed, {
        jsonrpc: "2.0",
        method: "notifications/prompts/list_changed",
        params: { _meta: { "io.modelcontextprotocol/subscriptionId": "listen-1" } },
      });
    });
  } finally {
    // End of input closes the listen stream gracefully: its result is the last word.
    const closing = server.next((m) => m.id === "listen-1");
    const { code } = await server.close();
    assert.deepEqual(await closing, {
      jsonrpc: "2.0",
      id: "listen-1",
      result: {
        resultType: "complete",
        _meta: {
          "io.modelcontextprotocol/subscriptionId": "listen-1",
          "io.modelcontextprotocol/serverInfo": {
            name: "anubis-everything",
            version: "1.0.0",
            title: "Anubis everything server",
          },
        },
      },
    });
    assert.equal(code, 0);
  }
});
