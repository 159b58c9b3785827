/**
 * The everything server's tools that return content: every content type, a
 * tool error, progress, logging, a JSON Schema 2020-12 input schema, and a
 * long-running tool that honours cancellation.
 *
 * @module
 */

import { defineTool, type Frame, type ToolDefinition } from "@anubis/core";
import { PNG_BASE64, WAV_BASE64 } from "./media.ts";

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
  });

/** The input schema conformance uses to check that JSON Schema 2020-12 survives `tools/list`. */
const JSON_SCHEMA_2020_12 = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  $defs: {
    address: {
      $anchor: "addressDef",
      type: "object",
      properties: { street: { type: "string" }, city: { type: "string" } },
    },
  },
  properties: {
    name: { type: "string" },
    address: { $ref: "#/$defs/address" },
    contactMethod: { type: "string", enum: ["phone", "email"] },
    phone: { type: "string" },
    email: { type: "string" },
  },
  allOf: [{ anyOf: [{ required: ["phone"] }, { required: ["email"] }] }],
  if: { properties: { contactMethod: { const: "phone" } }, required: ["contactMethod"] },
  then: { required: ["phone"] },
  else: { required: ["email"] },
  additionalProperties: false,
};

/** Reports three steps of progress, 50 ms apart, then answers with the progress token. */
async function reportProgress(_args: unknown, frame: Frame) {
  for (const step of [0, 50, 100]) {
    if (step > 0) await sleep(50, frame.signal);
    await frame.progress(step, { total: 100, message: `Completed step ${step} of 100` });
  }
  return String(frame.context.meta.progressToken ?? 0);
}

/**
 * Tools returning text, image, audio, embedded resources and mixed content; a
 * tool error; progress and log notifications; and `test_slow_operation`, which stops
 * when its request is cancelled.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { contentTools } from "./content_tools.ts";
 * assert.equal(contentTools[0].name, "test_simple_text");
 * ```
 */
export const contentTools: ToolDefinition<never>[] = [
  {
    name: "test_simple_text",
    description: "Tests simple text content response",
    // A string is one text block.
    handler: () => "This is a simple text response for testing.",
  },
  {
    name: "test_image_content",
    description: "Tests image content response",
    handler: () => ({ content: [{ type: "image", data: PNG_BASE64, mimeType: "image/png" }] }),
  },
  {
    name: "test_audio_content",
    description: "Tests audio content response",
    handler: () => ({ content: [{ type: "audio", data: WAV_BASE64, mimeType: "audio/wav" }] }),
  },
  {
    name: "test_embedded_resource",
    description: "Tests embedded resource content response",
    handler: () => ({
      content: [{
        type: "resource",
        resource: {
          uri: "test://embedded-resource",
          mimeType: "text/plain",
          text: "This is an embedded resource content.",
        },
      }],
    }),
  },
  {
    name: "test_multiple_content_types",
    description: "Tests response with multiple content types (text, image, resource)",
    handler: () => ({
      content: [
        { type: "text", text: "Multiple content types test:" },
        { type: "image", data: PNG_BASE64, mimeType: "image/png" },
        {
          type: "resource",
          resource: {
            uri: "test://mixed-content-resource",
            mimeType: "application/json",
            text: JSON.stringify({ test: "data", value: 123 }),
          },
        },
      ],
    }),
  },
  {
    name: "test_error_handling",
    description: "Tests error response handling",
    // Anything but an McpError thrown by a tool becomes an `isError` result
    // carrying its message: a tool failure the model can see, not a protocol error.
    handler: () => {
      throw new Error("This tool intentionally returns an error for testing");
    },
  },
  {
    name: "test_tool_with_progress",
    description: "Tests tool that reports progress notifications",
    handler: reportProgress,
  },
  {
    name: "test_tool_with_logging",
    description: "Tests tool that emits log messages during execution",
    handler: async (_args, frame) => {
      // Sent only at or above the client's level: `logging/setLevel` on a
      // session, the request's `_meta` log level in the stateless era.
      await frame.log("info", "Tool execution started");
      await sleep(50, frame.signal);
      await frame.log("info", "Tool processing data");
      await sleep(50, frame.signal);
      await frame.log("info", "Tool execution completed");
      return "Tool with logging executed successfully";
    },
  },
  {
    name: "json_schema_2020_12_tool",
    description: "Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)",
    inputSchema: JSON_SCHEMA_2020_12,
    handler: (args) => `JSON Schema 2020-12 tool called with: ${JSON.stringify(args)}`,
  },
  defineTool({
    name: "test_slow_operation",
    description: "Computes for a number of seconds, reporting progress; stops when cancelled",
    inputSchema: {
      type: "object",
      properties: {
        seconds: { type: "number", minimum: 0, maximum: 600 },
        label: { type: "string" },
      },
      required: ["seconds"],
    },
    handler: async ({ seconds, label = "compute" }: { seconds: number; label?: string }, frame) => {
      const steps = Math.max(1, Math.ceil(seconds * 10));
      for (let step = 1; step <= steps; step++) {
        await sleep((seconds * 1000) / steps, frame.signal);
        // A cancelled request gets no response: stop working and return.
        if (frame.signal.aborted) return `${label} cancelled`;
        await frame.progress(step, { total: steps });
      }
      return `${label} finished after ${seconds} s`;
    },
  }),
];
