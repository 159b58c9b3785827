/**
 * The second peer: tmcp with `@tmcp/transport-http` in `Deno.serve`,
 * written against its public API only. The transport serves both 2026-07-28
 * per-request traffic and initialize-based sessions on one endpoint.
 *
 * @module
 */

import { McpServer } from "tmcp";
import { HttpTransport } from "@tmcp/transport-http";
import { ValibotJsonSchemaAdapter } from "@tmcp/adapter-valibot";
import * as v from "valibot";
import { serveBench } from "./listening.ts";

const server = new McpServer(
  { name: "bench", version: "1.0.0", description: "benchmark peer" },
  { adapter: new ValibotJsonSchemaAdapter(), capabilities: { tools: {} } },
);
server.tool(
  { name: "echo", description: "Echoes its text", schema: v.object({ text: v.string() }) },
  ({ text }) => ({ content: [{ type: "text", text: `echo: ${text}` }] }),
);
const transport = new HttpTransport(server, { path: "/mcp" });

serveBench(
  "tmcp",
  async (request) => (await transport.respond(request)) ?? new Response(null, { status: 404 }),
);
