/**
 * The task fixtures plus a tool that waits for input that never comes and
 * records how its wait ended (`await_input`), and one that reports those
 * records (`aborts`): what the task-bounds tests read over HTTP from a
 * `cli serve` child.
 */

import { defineServer, defineTool } from "@anubis/core";
import { taskTools } from "../../examples/everything/task_tools.ts";

/** How each `await_input` wait ended: the abort reason its handler saw. */
const ended: { label: string; aborted: boolean; reason: string }[] = [];

export default defineServer({
  name: "tasks-bounds",
  version: "1.0.0",
  tools: [
    ...taskTools,
    defineTool({
      name: "await_input",
      description: "Asks the client a question and waits for its answer",
      inputSchema: { type: "object", properties: { label: { type: "string" } } },
      execution: { taskSupport: "optional" },
      handler: async ({ label }: { label?: string }, frame) => {
        try {
          await frame.elicit({
            message: "Go on?",
            requestedSchema: { type: "object", properties: { ok: { type: "boolean" } } },
          });
          return "answered";
        } catch (error) {
          const reason = frame.signal.reason;
          ended.push({
            label: label ?? "",
            aborted: frame.signal.aborted,
            reason: reason instanceof Error ? reason.message : String(reason ?? error),
          });
          throw error;
        }
      },
    }),
    defineTool({
      name: "aborts",
      description: "How the await_input waits ended so far",
      inputSchema: { type: "object", properties: {} },
      handler: () => JSON.stringify(ended),
    }),
  ],
});
