/**
 * The HTTP ceiling: a bare `Deno.serve` that parses the JSON-RPC body and
 * answers a fixed `tools/call` result with the request's id. `initialize`
 * gets a fixed result and a fresh `Mcp-Session-Id`; notifications get 202.
 * No validation, no dispatch: what any MCP server on Deno pays at least.
 *
 * @module
 */

import { serveBench } from "./listening.ts";

const JSON_HEADERS = { "content-type": "application/json" };
const CALL_RESULT = { content: [{ type: "text", text: "echo: hi" }], resultType: "complete" };
const INIT_RESULT = {
  protocolVersion: "2025-11-25",
  capabilities: { tools: {} },
  serverInfo: { name: "raw", version: "1.0.0" },
};

serveBench("raw", async (request) => {
  const message = await request.json();
  if (message.id === undefined) return new Response(null, { status: 202 });
  if (message.method === "initialize") {
    return new Response(
      JSON.stringify({ jsonrpc: "2.0", id: message.id, result: INIT_RESULT }),
      { headers: { ...JSON_HEADERS, "mcp-session-id": crypto.randomUUID() } },
    );
  }
  return new Response(
    JSON.stringify({ jsonrpc: "2.0", id: message.id, result: CALL_RESULT }),
    { headers: JSON_HEADERS },
  );
});
