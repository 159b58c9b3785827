/**
 * The tmcp server for every tmcp benchmark: the same `echo` tool, built by
 * tmcp's public API with its valibot adapter.
 *
 * @module
 */

import { McpServer } from "tmcp";
import { ValibotJsonSchemaAdapter } from "@tmcp/adapter-valibot";
import * as v from "valibot";

/**
 * Builds the echo server.
 *
 * @returns The server.
 */
export function createTmcpServer(): McpServer {
  const server = new McpServer(
    { name: "bench", version: "1.0.0", description: "benchmark peer" },
    { adapter: new ValibotJsonSchemaAdapter(), capabilities: { tools: {} } },
  );
  server.tool(
    { name: "echo", description: "Echoes its text", schema: v.object({ text: v.string() }) },
    ({ text }) => ({ content: [{ type: "text", text: `echo: ${text}` }] }),
  );
  return server;
}
