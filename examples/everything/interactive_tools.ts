/**
 * The everything server's tools that ask the client for input: sampling and
 * elicitation, including the SEP-1034 defaults and SEP-1330 enum forms.
 *
 * Each handler simply awaits `frame.sample()` or `frame.elicit()`. On a
 * legacy session that is a real server-to-client request; in the stateless
 * era the same call makes the tool answer `input_required`, and the client's
 * retry resumes the handler with the answer.
 *
 * @module
 */

import { defineTool, type ElicitResult, type ToolDefinition } from "@anubis/core";

/** How the conformance fixture reports an elicitation answer. */
const describe = (answer: ElicitResult) =>
  `action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`;

const options = (prefix: string, titles: string[]) =>
  titles.map((title, i) => ({ const: `${prefix}${i + 1}`, title }));

/**
 * `test_sampling`, `test_elicitation`, `test_elicitation_sep1034_defaults`
 * and `test_elicitation_sep1330_enums`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { interactiveTools } from "./interactive_tools.ts";
 * assert.ok(interactiveTools.some((t) => t.name === "test_sampling"));
 * ```
 */
export const interactiveTools: ToolDefinition<never>[] = [
  defineTool({
    name: "test_sampling",
    description: "Tests server-initiated sampling (LLM completion request)",
    inputSchema: {
      type: "object",
      properties: { prompt: { type: "string", description: "The prompt to send to the LLM" } },
      required: ["prompt"],
    },
    handler: async ({ prompt }: { prompt: string }, frame) => {
      const sampled = await frame.sample({
        messages: [{ role: "user", content: { type: "text", text: prompt } }],
        maxTokens: 100,
      });
      const content = sampled.content as { type: string; text?: string };
      return `LLM response: ${content.text ?? "No response"}`;
    },
  }),
  defineTool({
    name: "test_elicitation",
    description: "Tests server-initiated elicitation (user input request)",
    inputSchema: {
      type: "object",
      properties: { message: { type: "string", description: "The message to show the user" } },
      required: ["message"],
    },
    handler: async ({ message }: { message: string }, frame) => {
      const answer = await frame.elicit({
        mode: "form",
        message,
        requestedSchema: {
          type: "object",
          properties: {
            username: { type: "string", description: "User's response" },
            email: { type: "string", description: "User's email address" },
          },
          required: ["username", "email"],
        },
      });
      return `User response: ${describe(answer)}`;
    },
  }),
  {
    name: "test_elicitation_sep1034_defaults",
    description: "Tests elicitation with default values per SEP-1034",
    handler: async (_args, frame) => {
      const answer = await frame.elicit({
        mode: "form",
        message: "Please review and update the form fields with defaults",
        requestedSchema: {
          type: "object",
          properties: {
            name: { type: "string", description: "User name", default: "John Doe" },
            age: { type: "integer", description: "User age", default: 30 },
            score: { type: "number", description: "User score", default: 95.5 },
            status: {
              type: "string",
              description: "User status",
              enum: ["active", "inactive", "pending"],
              default: "active",
            },
            verified: { type: "boolean", description: "Verification status", default: true },
          },
          required: [],
        },
      });
      return `Elicitation completed: ${describe(answer)}`;
    },
  },
  {
    name: "test_elicitation_sep1330_enums",
    description: "Tests elicitation with enum schema improvements per SEP-1330",
    handler: async (_args, frame) => {
      const untitled = ["option1", "option2", "option3"];
      const answer = await frame.elicit({
        mode: "form",
        message: "Please select options from the enum fields",
        requestedSchema: {
          type: "object",
          properties: {
            untitledSingle: { type: "string", description: "Select one option", enum: untitled },
            titledSingle: {
              type: "string",
              description: "Select one option with titles",
              oneOf: options("value", ["First Option", "Second Option", "Third Option"]),
            },
            legacyEnum: {
              type: "string",
              description: "Select one option (legacy)",
              enum: ["opt1", "opt2", "opt3"],
              enumNames: ["Option One", "Option Two", "Option Three"],
            },
            untitledMulti: {
              type: "array",
              description: "Select multiple options",
              minItems: 1,
              maxItems: 3,
              items: { type: "string", enum: untitled },
            },
            titledMulti: {
              type: "array",
              description: "Select multiple options with titles",
              minItems: 1,
              maxItems: 3,
              items: {
                anyOf: options("value", ["First Choice", "Second Choice", "Third Choice"]),
              },
            },
          },
          required: [],
        },
      });
      return `Elicitation completed: ${describe(answer)}`;
    },
  },
];
