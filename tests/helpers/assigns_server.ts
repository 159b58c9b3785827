/**
 * A server whose tools keep what they are given in the session's assigns,
 * for the session store tests: `remember` stores `size` characters,
 * `recall` says how many it holds.
 */

import { defineServer } from "@anubis/core";

export default defineServer({
  name: "assigns",
  version: "1.0.0",
  tools: [
    {
      name: "remember",
      description: "Keeps `size` characters in the session's assigns",
      inputSchema: { type: "object", properties: { size: { type: "number" } }, required: ["size"] },
      handler: ({ size }, frame) => {
        frame.assigns.blob = "x".repeat(size as number);
        return `remembered ${size}`;
      },
    },
    {
      name: "recall",
      description: "Says how many characters the session's assigns keep",
      handler: (_args, frame) => `holds ${String(frame.assigns.blob ?? "").length}`,
    },
  ],
});
