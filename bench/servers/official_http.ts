/**
 * The peer: the official TypeScript SDK v2 (`@modelcontextprotocol/server`)
 * in `Deno.serve`, written against its public API only.
 *
 * `deno run -A official_http.ts stateless`: `createMcpHandler(factory)`, the
 * SDK's 2026-07-28 entry (one server instance per request, by design).
 * `deno run -A official_http.ts sessions`: legacy 2025-11-25 sessions, one
 * `McpServer` plus `WebStandardStreamableHTTPServerTransport` per session,
 * found by `Mcp-Session-Id`.
 *
 * @module
 */

import {
  createMcpHandler,
  WebStandardStreamableHTTPServerTransport,
} from "@modelcontextprotocol/server";
import { createOfficialServer as createServer } from "./official_echo.ts";
import { serveBench } from "./listening.ts";

function sessionsHandler(): (request: Request) => Promise<Response> {
  const transports = new Map<string, WebStandardStreamableHTTPServerTransport>();
  return async (request) => {
    const id = request.headers.get("mcp-session-id");
    if (id) {
      const transport = transports.get(id);
      if (!transport) return new Response("unknown session", { status: 404 });
      return transport.handleRequest(request);
    }
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => crypto.randomUUID(),
      enableJsonResponse: true,
      onsessioninitialized: (sessionId) => void transports.set(sessionId, transport),
      onsessionclosed: (sessionId) => void transports.delete(sessionId),
    });
    await createServer().connect(transport);
    return transport.handleRequest(request);
  };
}

const mode = Deno.args[0] ?? "stateless";
const handle = mode === "sessions"
  ? sessionsHandler()
  : ((handler) => (request: Request) => handler.fetch(request))(createMcpHandler(createServer));

serveBench(`official-${mode}`, handle);
