/**
 * The official SDK v2 server for every official-peer benchmark: an
 * `McpServer` with the same `echo` tool, built by the SDK's public API.
 *
 * @module
 */

import { McpServer } from "@modelcontextprotocol/server";
import * as z from "zod";

/**
 * Builds the echo server (the SDK's factories call it once per request,
 * session or connection).
 *
 * @returns A fresh server.
 */
export function createOfficialServer(): McpServer {
  const server = new McpServer({ name: "bench", version: "1.0.0" });
  server.registerTool(
    "echo",
    { description: "Echoes its text", inputSchema: z.object({ text: z.string() }) },
    ({ text }) => ({ content: [{ type: "text", text: `echo: ${text}` }] }),
  );
  return server;
}
