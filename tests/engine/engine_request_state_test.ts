/**
 * A stateless multi round-trip `requestState` is bound to the request it was
 * issued for: its method, target and arguments (digest §4.5.3).
 */

import assert from "node:assert/strict";
import { engineHarness, META } from "../helpers/engine_harness.ts";

const CAPS = { ...META, "io.modelcontextprotocol/clientCapabilities": { elicitation: {} } };
const CONFIRM = {
  type: "object" as const,
  properties: { ok: { type: "boolean" } },
  required: ["ok"],
};

function harness() {
  return engineHarness({
    tools: [{
      name: "delete",
      description: "deletes after confirmation",
      inputSchema: { type: "object", properties: { id: { type: "string" } } },
      handler: async (args: { id?: string }, frame) => {
        const answer = await frame.elicit({
          message: `Delete ${args.id}?`,
          requestedSchema: CONFIRM,
        });
        return `${answer.action} ${args.id}`;
      },
    }],
    prompts: [{
      name: "p",
      arguments: [{ name: "topic" }],
      handler: async (args, frame) => {
        await frame.elicit({ message: "go?", requestedSchema: CONFIRM });
        return [{ role: "user", content: { type: "text", text: `on ${args.topic}` } }];
      },
    }],
  });
}

const YES = { elicitation_1: { action: "accept", content: { ok: true } } };

type Harness = ReturnType<typeof harness>;

/** Round 1 of `method` on `name` with `args`; resolves to its requestState. */
async function firstRound(t: Harness, method: string, name: string, args?: object) {
  const round1 = (await t.request(method, { name, arguments: args, _meta: CAPS })).result;
  assert.equal(round1.resultType, "input_required");
  return round1.requestState as string;
}

/** The retry of a round 1, with `args` and the confirmation. */
function retry(t: Harness, method: string, name: string, state: string, args?: object) {
  return t.request(method, {
    name,
    arguments: args,
    _meta: CAPS,
    requestState: state,
    inputResponses: YES,
  });
}

Deno.test("a requestState replayed with other tool arguments is -32602", async () => {
  const t = harness();
  const state = await firstRound(t, "tools/call", "delete", { id: "harmless" });
  const replayed = await retry(t, "tools/call", "delete", state, { id: "precious" });
  assert.deepEqual(replayed.error, {
    code: -32602,
    message: "requestState belongs to another request",
  });
  const honest = await retry(t, "tools/call", "delete", state, { id: "harmless" });
  assert.deepEqual(honest.result.content, [{ type: "text", text: "accept harmless" }]);
});

Deno.test("a requestState binds prompts/get arguments; key order does not matter", async () => {
  const t = harness();
  const state = await firstRound(t, "prompts/get", "p", { topic: "cats", extra: "x" });
  const other = await retry(t, "prompts/get", "p", state, { topic: "dogs", extra: "x" });
  assert.equal(other.error.code, -32602);
  const reordered = await retry(t, "prompts/get", "p", state, { extra: "x", topic: "cats" });
  assert.equal(reordered.result.messages[0].content.text, "on cats");
});

Deno.test("missing arguments and {} bind alike", async () => {
  const t = harness();
  const state = await firstRound(t, "tools/call", "delete");
  const answered = await retry(t, "tools/call", "delete", state, {});
  assert.deepEqual(answered.result.content, [{ type: "text", text: "accept undefined" }]);
});
