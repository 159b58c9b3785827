/**
 * The everything server's prompts: plain, with arguments (and their
 * completion), with an embedded resource, with an image, and one that asks
 * the user for context first.
 *
 * @module
 */

import type { PromptDefinition } from "@anubis/core";
import { PNG_BASE64 } from "./media.ts";

const startingWith = (values: string[]) => (value: string) =>
  values.filter((v) => v.startsWith(value));

/**
 * The prompts of the conformance contract.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { prompts } from "./prompts.ts";
 * assert.equal(prompts[0].name, "test_simple_prompt");
 * ```
 */
export const prompts: PromptDefinition[] = [
  {
    name: "test_simple_prompt",
    title: "Simple Test Prompt",
    description: "A simple prompt without arguments",
    handler: () => [{
      role: "user",
      content: { type: "text", text: "This is a simple prompt for testing." },
    }],
  },
  {
    name: "test_prompt_with_arguments",
    title: "Prompt With Arguments",
    description: "A prompt with required arguments",
    arguments: [
      {
        name: "arg1",
        description: "First test argument",
        required: true,
        // Answers completion/complete for this argument.
        complete: startingWith(["test", "testValue1", "value1"]),
      },
      {
        name: "arg2",
        description: "Second test argument",
        required: true,
        complete: startingWith(["testValue2", "value2"]),
      },
    ],
    handler: ({ arg1, arg2 }) => [{
      role: "user",
      content: { type: "text", text: `Prompt with arguments: arg1='${arg1}', arg2='${arg2}'` },
    }],
  },
  {
    name: "test_prompt_with_embedded_resource",
    title: "Prompt With Embedded Resource",
    description: "A prompt that includes an embedded resource",
    arguments: [{
      name: "resourceUri",
      description: "URI of the resource to embed",
      required: true,
    }],
    handler: ({ resourceUri }) => [
      {
        role: "user",
        content: {
          type: "resource",
          resource: {
            uri: resourceUri,
            mimeType: "text/plain",
            text: "Embedded resource content for testing.",
          },
        },
      },
      {
        role: "user",
        content: { type: "text", text: "Please process the embedded resource above." },
      },
    ],
  },
  {
    name: "test_prompt_with_image",
    title: "Prompt With Image",
    description: "A prompt that includes image content",
    handler: () => [
      { role: "user", content: { type: "image", data: PNG_BASE64, mimeType: "image/png" } },
      { role: "user", content: { type: "text", text: "Please analyze the image above." } },
    ],
  },
  {
    name: "test_input_required_result_prompt",
    title: "Prompt Needing Context",
    description: "Asks the user for context before building its messages",
    handler: async (_args, frame) => {
      const answer = await frame.elicit({
        message: "What context should the prompt use?",
        requestedSchema: {
          type: "object",
          properties: { context: { type: "string" } },
          required: ["context"],
        },
      }, { key: "user_context" });
      const context = answer.action === "accept" ? answer.content?.context : "none";
      return [{ role: "user", content: { type: "text", text: `Context: ${context}` } }];
    },
  },
];
