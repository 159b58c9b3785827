/**
 * An accepted elicitation's content is checked against the `requestedSchema`
 * the server sent (2025-11-25: servers SHOULD validate elicitation responses).
 * Stateless: a non-matching answer is asked again, like any invalid answer.
 * Legacy: the handler's `elicit()` rejects with `-32602`.
 */

import assert from "node:assert/strict";
import type { JsonRpcMessage } from "@anubis/core/engine";
import { requestedSchemas } from "../../core/_elicitation_check.ts";
import { engineHarness, META } from "../helpers/engine_harness.ts";

const NAME = {
  type: "object" as const,
  properties: { name: { type: "string" }, age: { type: "integer", minimum: 0 } },
  required: ["name"],
};

function harness() {
  const seen: unknown[] = [];
  const t = engineHarness({
    tools: [{
      name: "ask",
      description: "asks the user's name",
      handler: async (_args, frame) => {
        const answer = await frame.elicit({ message: "Your name?", requestedSchema: NAME });
        seen.push(answer);
        return answer.action === "accept" ? `hello ${answer.content!.name}` : answer.action;
      },
    }],
  }, { sessionId: "s-1" });
  return { t, seen };
}

const CAPS = { ...META, "io.modelcontextprotocol/clientCapabilities": { elicitation: {} } };

Deno.test("stateless: content that does not match requestedSchema is asked again", async () => {
  const { t, seen } = harness();
  const round1 = (await t.request("tools/call", { name: "ask", _meta: CAPS })).result;
  assert.deepEqual(Object.keys(round1.inputRequests), ["elicitation_1"]);
  const retry = (content: unknown, action = "accept") =>
    t.request("tools/call", {
      name: "ask",
      _meta: CAPS,
      requestState: round1.requestState,
      inputResponses: { elicitation_1: { action, content } },
    });
  for (const bad of [{ name: 5 }, {}, { name: "Ada", age: -1 }, undefined]) {
    const again = (await retry(bad)).result;
    assert.equal(again.resultType, "input_required", JSON.stringify(bad));
    assert.deepEqual(again.inputRequests, round1.inputRequests);
  }
  assert.deepEqual(seen, []);
  assert.deepEqual((await retry({ name: "Ada", age: 3 })).result.content, [
    { type: "text", text: "hello Ada" },
  ]);
  // Declining needs no content.
  assert.deepEqual((await retry(undefined, "decline")).result.content, [
    { type: "text", text: "decline" },
  ]);
});

/** Serves `ask` on a legacy session, answering its elicitation with `answer`. */
async function legacyAsk(answer: Record<string, unknown>) {
  const { t, seen } = harness();
  await t.request("initialize", {
    protocolVersion: "2025-11-25",
    capabilities: { elicitation: {} },
    clientInfo: { name: "c", version: "1" },
  });
  const pending = t.request("tools/call", { name: "ask" });
  let request: JsonRpcMessage | undefined;
  while (!(request = t.emitted.find((m) => "method" in m && m.method === "elicitation/create"))) {
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  const id = (request as { id: string }).id;
  await t.engine.handle({ jsonrpc: "2.0", id, result: answer }, t.exchange);
  const reply = await pending;
  t.engine.close();
  return { reply, seen };
}

Deno.test("legacy: content that does not match requestedSchema rejects elicit() with -32602", async () => {
  const { reply, seen } = await legacyAsk({ action: "accept", content: { name: 5 } });
  assert.deepEqual(seen, []);
  assert.deepEqual(reply.error, {
    code: -32602,
    message: "Invalid elicitation/create content from the client: name: must be string",
  });
  const ok = await legacyAsk({ action: "accept", content: { name: "Ada" } });
  assert.deepEqual(ok.reply.result.content, [{ type: "text", text: "hello Ada" }]);
  const cancelled = await legacyAsk({ action: "cancel" });
  assert.deepEqual(cancelled.reply.result.content, [{ type: "text", text: "cancel" }]);
});

Deno.test("stateless: an inline requestedSchema compiles once, and not for round 1", async () => {
  const t = engineHarness({
    tools: [{
      name: "pick",
      description: "asks for a titled choice, with its schema written inline",
      handler: async (_args, frame) => {
        const answer = await frame.elicit({
          message: "Pick one",
          requestedSchema: {
            type: "object",
            properties: {
              choice: { type: "string", oneOf: [{ const: "a", title: "A" }, { const: "b" }] },
            },
          },
        });
        return String(answer.content?.choice);
      },
    }],
  });
  const before = requestedSchemas.compiles;
  const round1 = (await t.request("tools/call", { name: "pick", _meta: CAPS })).result;
  assert.equal(round1.resultType, "input_required");
  assert.equal(requestedSchemas.compiles, before);
  for (let i = 0; i < 50; i++) {
    const choice = i % 2 ? "a" : "c";
    const reply = (await t.request("tools/call", {
      name: "pick",
      _meta: CAPS,
      requestState: round1.requestState,
      inputResponses: { elicitation_1: { action: "accept", content: { choice } } },
    })).result;
    if (choice === "a") assert.deepEqual(reply.content, [{ type: "text", text: "a" }]);
    else assert.equal(reply.resultType, "input_required");
  }
  assert.equal(requestedSchemas.compiles - before, 1);
});
