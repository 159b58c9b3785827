/**
 * The server every benchmark serves through this SDK: one `echo` tool, the
 * same work the ceiling and the peers answer.
 *
 * @module
 */

import { defineServer, type McpServer } from "@anubis/core";

/** The benchmark server: one tool that echoes its `text` argument. */
const server: McpServer = defineServer({
  name: "bench",
  version: "1.0.0",
  tools: [{
    name: "echo",
    description: "Echoes its text",
    inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    handler: ({ text }: { text: string }) => `echo: ${text}`,
  }],
});

export default server;
