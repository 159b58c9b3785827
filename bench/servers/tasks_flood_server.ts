/**
 * The server `bench/soak_tasks.ts` floods: the everything task tools, plus
 * `hold` (a task that waits until cancelled), `await_input` (elicits and
 * counts its live handlers) and `handlers` (those counts).
 *
 * @module
 */

import { defineServer, defineTool } from "@anubis/core";
import { taskTools } from "../../examples/everything/task_tools.ts";
let live = 0, peak = 0, ended = 0;
export default defineServer({
  name: "fig",
  version: "1.0.0",
  tools: [
    ...taskTools,
    defineTool({
      name: "hold",
      description: "waits until cancelled (or an hour)",
      inputSchema: { type: "object", properties: {} },
      execution: { taskSupport: "optional" },
      handler: (_args: Record<string, never>, frame) =>
        new Promise<string>((resolve) => {
          const t = setTimeout(() => resolve("held"), 3_600_000);
          frame.signal.addEventListener("abort", () => {
            clearTimeout(t);
            resolve("aborted");
          }, { once: true });
        }),
    }),
    defineTool({
      name: "await_input",
      description: "elicits; counts live handlers",
      inputSchema: { type: "object", properties: {} },
      execution: { taskSupport: "optional" },
      handler: async (_args: Record<string, never>, frame) => {
        live++;
        peak = Math.max(peak, live);
        try {
          await frame.elicit({ message: "?", requestedSchema: { type: "object", properties: {} } });
          return "ok";
        } finally {
          live--;
          ended++;
        }
      },
    }),
    defineTool({
      name: "handlers",
      description: "live/peak/ended",
      inputSchema: { type: "object", properties: {} },
      handler: () => JSON.stringify({ live, peak, ended }),
    }),
  ],
});
