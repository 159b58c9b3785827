/**
 * The everything server's diagnostic tools of the 2026-07-28 conformance
 * scenarios: capability checks, request-scoped logging, change triggers, and
 * multi round-trip input (`input_required` results).
 *
 * They use the same frame helpers as any tool, so they also work on a legacy
 * session (input becomes real server-to-client requests there).
 *
 * @module
 */

import { defineTool, type ElicitParams, type Frame, type ToolDefinition } from "@anubis/core";

/** A one-field form. */
function form(message: string, field: string, type: "string" | "boolean"): ElicitParams {
  return {
    message,
    requestedSchema: {
      type: "object",
      properties: { [field]: { type } },
      required: [field],
    },
  };
}

const CAPITAL_QUESTION = {
  messages: [{
    role: "user" as const,
    content: { type: "text", text: "What is the capital of France?" },
  }],
  maxTokens: 100,
};

const textOf = (sampled: { content: unknown }) => (sampled.content as { text?: string }).text ?? "";

const rootsOf = (roots: { roots: { uri: string }[] }) => roots.roots.map((r) => r.uri).join(", ");

/** Asks for the user's name, as `test_input_required_result_elicitation` expects. */
async function greetByName(_args: unknown, frame: Frame) {
  const answer = await frame.elicit(form("What is your name?", "name", "string"), {
    key: "user_name",
  });
  if (answer.action !== "accept") return `No name given (${answer.action})`;
  return `Hello, ${answer.content?.name}!`;
}

/**
 * The 2026-07-28 diagnostic tools (`test_missing_capability`,
 * `test_streaming_elicitation`, `test_logging_tool`, the change triggers and
 * the `test_input_required_result_*` family), `test_x_mcp_header`, and the
 * 2025-11-25 `test_reconnection` (SSE polling).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { diagnosticTools } from "./diagnostic_tools.ts";
 * assert.ok(diagnosticTools.some((t) => t.name === "test_logging_tool"));
 * ```
 */
export const diagnosticTools: ToolDefinition<never>[] = [
  {
    name: "test_missing_capability",
    description: "Needs sampling: rejected with -32021 when the client did not declare it",
    // Asking for input the client did not declare is refused by the frame:
    // -32021 with `requiredCapabilities` (HTTP 400) in the stateless era.
    handler: async (_args, frame) => `Sampled: ${textOf(await frame.sample(CAPITAL_QUESTION))}`,
  },
  {
    name: "test_streaming_elicitation",
    description: "Elicits without ever putting a request on the response stream",
    handler: async (_args, frame) => {
      const answer = await frame.elicit(form("Continue?", "ok", "boolean"), { key: "continue" });
      return `Elicitation answered: ${answer.action}`;
    },
  },
  {
    name: "test_reconnection",
    description: "Closes its SSE stream mid-call (SEP-1699 polling); the result arrives " +
      "after the client reconnects with Last-Event-ID",
    handler: async (_args, frame) => {
      // Over HTTP with an event store (2025-11-25 sessions) the client gets the
      // priming event, then the connection closes; the work goes on and its
      // result is recorded for the reconnecting GET. Elsewhere it just answers.
      frame.closeStream();
      await new Promise((resolve) => setTimeout(resolve, 100));
      return "Reconnection test completed successfully";
    },
  },
  {
    name: "test_logging_tool",
    description: "Logs only when the request asked for a log level",
    handler: async (_args, frame) => {
      await frame.log("info", "test_logging_tool started");
      await frame.log("info", "test_logging_tool finished");
      return "Logging tool done";
    },
  },
  {
    name: "test_trigger_tool_change",
    description: "Publishes notifications/tools/list_changed",
    handler: (_args, frame) => {
      frame.notify.toolsListChanged();
      return "Published notifications/tools/list_changed";
    },
  },
  {
    name: "test_trigger_prompt_change",
    description: "Publishes notifications/prompts/list_changed",
    handler: (_args, frame) => {
      frame.notify.promptsListChanged();
      return "Published notifications/prompts/list_changed";
    },
  },
  {
    name: "test_input_required_result_elicitation",
    description: "Asks for the user's name with an input_required result",
    handler: greetByName,
  },
  {
    name: "test_input_required_result_sampling",
    description: "Asks the client to sample with an input_required result",
    handler: async (_args, frame) => {
      const sampled = await frame.sample(CAPITAL_QUESTION, { key: "sample_request" });
      return `Sampling result: ${textOf(sampled)}`;
    },
  },
  {
    name: "test_input_required_result_list_roots",
    description: "Asks the client for its roots with an input_required result",
    handler: async (_args, frame) => {
      const roots = await frame.listRoots({ key: "roots_request" });
      return `Roots: ${rootsOf(roots)}`;
    },
  },
  {
    name: "test_input_required_result_request_state",
    description: "Carries its progress in requestState between rounds",
    handler: async (_args, frame) => {
      const answer = await frame.elicit(form("Please confirm", "ok", "boolean"), {
        key: "confirm",
      });
      return `state-ok: confirmed=${answer.content?.ok === true}`;
    },
  },
  {
    name: "test_input_required_result_multiple_inputs",
    description: "Asks for an elicitation, a sample and the roots in one round",
    handler: async (_args, frame) => {
      // Started together, the three requests go out in one input_required result.
      const [answer, sampled, roots] = await Promise.all([
        frame.elicit(form("What is your name?", "name", "string"), { key: "user_name" }),
        frame.sample(CAPITAL_QUESTION, { key: "sample_request" }),
        frame.listRoots({ key: "roots_request" }),
      ]);
      return `name=${answer.content?.name}, sample=${textOf(sampled)}, roots=${rootsOf(roots)}`;
    },
  },
  {
    name: "test_input_required_result_multi_round",
    description: "Asks one question per round: a name, then a colour",
    handler: async (_args, frame) => {
      // Awaited one after the other, each question is a round of its own.
      const name = await frame.elicit(form("What is your name?", "name", "string"), {
        key: "name",
      });
      const color = await frame.elicit(form("What is your favourite colour?", "color", "string"), {
        key: "color",
      });
      return `${name.content?.name} likes ${color.content?.color}`;
    },
  },
  {
    name: "test_input_required_result_tampered_state",
    description: "Rejects a requestState that fails its integrity check",
    // Nothing to do here: every requestState is HMAC-signed, and a tampered
    // one is refused with -32602 before the handler runs.
    handler: greetByName,
  },
  {
    name: "test_input_required_result_capabilities",
    description: "Asks only for the input kinds the client declared",
    handler: async (_args, frame) => {
      // Ask only what this client (at its protocol version) can answer.
      const asked: Promise<string>[] = [];
      if (frame.canElicit()) {
        asked.push(
          frame.elicit(form("What is your name?", "name", "string"), { key: "user_name" })
            .then((a) => `name=${a.content?.name}`),
        );
      }
      if (frame.canSample()) {
        asked.push(
          frame.sample(CAPITAL_QUESTION, { key: "sample_request" })
            .then((s) => `sample=${textOf(s)}`),
        );
      }
      if (frame.canListRoots()) {
        asked.push(frame.listRoots({ key: "roots_request" }).then((r) => `roots=${rootsOf(r)}`));
      }
      if (asked.length === 0) return "The client declared no input capability";
      return (await Promise.all(asked)).join(", ");
    },
  },
  defineTool({
    name: "test_x_mcp_header",
    description: "Takes a region that clients mirror into the Mcp-Param-Region header (SEP-2243)",
    inputSchema: {
      type: "object",
      // Over HTTP the transport checks the header against the argument.
      properties: { region: { type: "string", "x-mcp-header": "Region" } },
      required: ["region"],
    },
    handler: ({ region }) => `Region: ${region}`,
  }),
];
