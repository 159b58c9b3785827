/**
 * The peer on Node: the official TypeScript SDK v2 with its Node HTTP
 * transport (`@modelcontextprotocol/node`), written against its public API
 * only, built as `servers/official_http.ts` builds it on Deno.
 *
 * `node official.mjs stateless`: `toNodeHandler(createMcpHandler(factory))`,
 * the SDK's 2026-07-28 entry (one server instance per request, by design).
 * `node official.mjs sessions`: legacy 2025-11-25 sessions, one `McpServer`
 * plus `NodeStreamableHTTPServerTransport` per session, found by
 * `Mcp-Session-Id`.
 *
 * @module
 */

import { randomUUID } from "node:crypto";
import process from "node:process";
import { NodeStreamableHTTPServerTransport, toNodeHandler } from "@modelcontextprotocol/node";
import { createMcpHandler } from "@modelcontextprotocol/server";
import { createOfficialServer as createServer } from "../official_echo.ts";
import { listenBench, type Listener } from "./listening.ts";

function sessionsListener(): Listener {
  const transports = new Map<string, NodeStreamableHTTPServerTransport>();
  const handle: (...args: Parameters<Listener>) => Promise<void> = async (request, response) => {
    const id = request.headers["mcp-session-id"];
    if (typeof id === "string") {
      const transport = transports.get(id);
      if (!transport) {
        response.writeHead(404).end("unknown session");
        return;
      }
      return transport.handleRequest(request, response);
    }
    const transport = new NodeStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: true,
      onsessioninitialized: (sessionId) => void transports.set(sessionId, transport),
      onsessionclosed: (sessionId) => void transports.delete(sessionId),
    });
    await createServer().connect(transport);
    return transport.handleRequest(request, response);
  };
  return (request, response) => void handle(request, response).catch(() => response.destroy());
}

const mode = process.argv[2] ?? "stateless";
const listener: Listener = mode === "sessions"
  ? sessionsListener()
  : ((handle) => (request, response) =>
    void handle(request, response).catch(() => response.destroy()))(
      toNodeHandler(createMcpHandler(createServer)),
    );

listenBench(`official-node-${mode}`, listener);
