/**
 * The Node HTTP ceiling: a bare `node:http` server that reads and parses the
 * JSON-RPC body and answers a fixed `tools/call` result with the request's
 * id, as `servers/raw_http.ts` does on Deno. `initialize` gets a fixed result
 * and a fresh `Mcp-Session-Id`; notifications get 202. No MCP work.
 *
 * @module
 */

import { Buffer } from "node:buffer";
import { randomUUID } from "node:crypto";
import { listenBench } from "./listening.ts";

const CALL_RESULT = { content: [{ type: "text", text: "echo: hi" }], resultType: "complete" };
const INIT_RESULT = {
  protocolVersion: "2025-11-25",
  capabilities: { tools: {} },
  serverInfo: { name: "raw", version: "1.0.0" },
};

listenBench("raw-node", (request, response) => {
  const chunks: Uint8Array[] = [];
  request.on("data", (chunk: Uint8Array) => chunks.push(chunk));
  request.on("end", () => {
    let message;
    try {
      message = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    } catch {
      response.writeHead(400).end();
      return;
    }
    if (message.id === undefined) {
      response.writeHead(202).end();
      return;
    }
    const headers: Record<string, string> = { "content-type": "application/json" };
    const result = message.method === "initialize" ? INIT_RESULT : CALL_RESULT;
    if (message.method === "initialize") headers["mcp-session-id"] = randomUUID();
    response.writeHead(200, headers).end(
      JSON.stringify({ jsonrpc: "2.0", id: message.id, result }),
    );
  });
});
