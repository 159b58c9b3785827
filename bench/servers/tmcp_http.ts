/**
 * The second peer: tmcp with `@tmcp/transport-http` in `Deno.serve`,
 * written against its public API only. The transport serves both 2026-07-28
 * per-request traffic and initialize-based sessions on one endpoint.
 *
 * @module
 */

import { HttpTransport } from "@tmcp/transport-http";
import { createTmcpServer } from "./tmcp_echo.ts";
import { serveBench } from "./listening.ts";

const transport = new HttpTransport(createTmcpServer(), { path: "/mcp" });

serveBench(
  "tmcp",
  async (request) => (await transport.respond(request)) ?? new Response(null, { status: 404 }),
);
