/**
 * `@anubis/transport-http`: Streamable HTTP for `@anubis/core` servers. A
 * Web-standard `(Request) => Promise<Response>` handler that serves the
 * legacy (session) and stateless (2026-07-28) eras on one endpoint, and
 * `serve()` for Deno.
 *
 * @example
 * ```ts
 * import { defineServer } from "@anubis/core";
 * import { serve } from "@anubis/transport-http";
 * import assert from "node:assert/strict";
 * const running = serve(defineServer({ name: "hello", version: "1.0.0" }), { port: 0 });
 * assert.equal(running.url.pathname, "/mcp");
 * await running.shutdown();
 * ```
 *
 * @module
 */

export * from "./handler.ts";
export * from "./serve.ts";
export * from "./limits.ts";
export * from "./origin.ts";
export * from "./cors.ts";
export type { AuthInfo, AuthOptions, TokenVerifier } from "./auth.ts";
export { type IntrospectionOptions, introspectionVerifier } from "./introspection.ts";
export type { RateLimitOptions } from "./rate_limit.ts";
export { jwtVerifier, type JwtVerifierOptions } from "./jwt_verifier.ts";
export * from "./headers.ts";
export * from "./header_record.ts";
export * from "./request_context.ts";
export * from "./body.ts";
export * from "./responses.ts";
export * from "./outbound.ts";
export * from "./respond.ts";
export * from "./sse.ts";
export * from "./sse_stream.ts";
export * from "./standalone_stream.ts";
export * from "./session_table.ts";
export * from "./session_bus_message.ts";
export * from "./session_links.ts";
export * from "./legacy.ts";
export * from "./stateless.ts";
export * from "./post_stream.ts";
