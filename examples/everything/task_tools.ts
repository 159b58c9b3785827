/**
 * The everything server's task fixtures (the conformance `tasks-*`
 * scenarios): tools that may or must run as tasks, so the client polls while
 * the handler works in the background.
 *
 * A handler is the same function whether its call runs as a task or not:
 * `frame.signal` aborts when the task is cancelled, and `frame.elicit()` moves
 * the task to `input_required` until the client answers.
 *
 * @module
 */

import { defineTool, ErrorCode, type Frame, McpError, type ToolDefinition } from "@anubis/core";

/** Waits `ms`, or rejects when the frame's request (or task) is cancelled. */
function sleep(ms: number, frame: Frame): Promise<void> {
  const signal = frame.signal;
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", stop);
      resolve();
    }, ms);
    const stop = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener("abort", stop, { once: true });
  });
}

const confirmSchema: { type: "object"; properties: Record<string, unknown>; required: string[] } = {
  type: "object",
  properties: { confirm: { type: "boolean", description: "Go ahead?" } },
  required: ["confirm"],
};

/**
 * `greet`, `slow_compute`, `failing_job`, `protocol_error_job`,
 * `confirm_delete`, `multi_input` and `test_tool_with_task`.
 *
 * @example
 * ```ts
 * import { taskTools } from "./task_tools.ts";
 * const slow = taskTools.find((t) => t.name === "slow_compute");
 * if (slow?.execution?.taskSupport !== "optional") throw new Error("not task-capable");
 * ```
 */
export const taskTools: ToolDefinition<never>[] = [
  defineTool({
    name: "greet",
    description: "Greets someone at once (never a task)",
    inputSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
    handler: ({ name }: { name: string }) => `Hello, ${name}!`,
  }),
  defineTool({
    name: "slow_compute",
    description: "Works for some seconds, then reports; may run as a task",
    inputSchema: {
      type: "object",
      properties: {
        seconds: { type: "number", minimum: 0, maximum: 120 },
        label: { type: "string" },
      },
      required: ["seconds"],
    },
    execution: { taskSupport: "optional" },
    handler: async ({ seconds, label }: { seconds: number; label?: string }, frame) => {
      await sleep(seconds * 1000, frame);
      return `Computed ${label ?? "result"} after ${seconds}s`;
    },
  }),
  defineTool({
    name: "failing_job",
    description: "Runs as a task and ends with a tool error",
    inputSchema: { type: "object", properties: {} },
    execution: { taskSupport: "required" },
    handler: async (_args: Record<string, never>, frame) => {
      await sleep(1000, frame);
      return { content: [{ type: "text", text: "The job failed" }], isError: true };
    },
  }),
  defineTool({
    name: "protocol_error_job",
    description: "Runs as a task and ends with a protocol error",
    inputSchema: { type: "object", properties: {} },
    execution: { taskSupport: "optional" },
    handler: async (_args: Record<string, never>, frame) => {
      await sleep(100, frame);
      throw new McpError(ErrorCode.INTERNAL_ERROR, "The job broke down");
    },
  }),
  defineTool({
    name: "confirm_delete",
    description: "Asks for confirmation, then deletes (pretends to)",
    inputSchema: {
      type: "object",
      properties: { filename: { type: "string" } },
      required: ["filename"],
    },
    execution: { taskSupport: "optional" },
    handler: async ({ filename }: { filename: string }, frame) => {
      const answer = await frame.elicit({
        message: `Delete ${filename}?`,
        requestedSchema: confirmSchema,
      });
      const yes = answer.action === "accept" && answer.content?.confirm === true;
      return yes ? `Deleted ${filename}` : `Kept ${filename}`;
    },
  }),
  defineTool({
    name: "multi_input",
    description: "Asks two questions at once",
    inputSchema: { type: "object", properties: {} },
    execution: { taskSupport: "optional" },
    handler: async (_args: Record<string, never>, frame) => {
      const [first, second] = await Promise.all([
        frame.elicit({ message: "First question?", requestedSchema: confirmSchema }),
        frame.elicit({ message: "Second question?", requestedSchema: confirmSchema }),
      ]);
      return `first=${first.action}, second=${second.action}`;
    },
  }),
  defineTool({
    name: "test_tool_with_task",
    description: "Asks for a name, then greets it from a task",
    inputSchema: { type: "object", properties: {} },
    execution: { taskSupport: "required" },
    // The name is asked in the request itself; only the greeting runs as a task.
    taskStart: "handler",
    handler: async (_args: Record<string, never>, frame) => {
      const answer = await frame.elicit({
        message: "What is your name?",
        requestedSchema: {
          type: "object",
          properties: { name: { type: "string" } },
          required: ["name"],
        },
      }, { key: "user_name" });
      const name = answer.action === "accept" ? String(answer.content?.name) : "stranger";
      return await frame.runAsTask(() => `Hello, ${name}!`);
    },
  }),
];
