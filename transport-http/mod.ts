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

export { createHttpHandler, type HttpHandler, type HttpHandlerOptions } from "./handler.ts";
export { type RunningServer, serve, type ServeOptions } from "./serve.ts";
export type { RequestContext, ServeInfoLike } from "./request_context.ts";
export { isLoopbackHost, type OriginPolicy } from "./origin.ts";
export type { CorsOptions } from "./cors.ts";
export {
  type AuthInfo,
  type AuthOptions,
  type TokenVerifier,
  VerifierUnavailableError,
} from "./auth.ts";
export { jwtVerifier, type JwtVerifierOptions } from "./jwt_verifier.ts";
export { type IntrospectionOptions, introspectionVerifier } from "./introspection.ts";
export type { RateLimitOptions } from "./rate_limit.ts";
export type { SessionBusMessage } from "./legacy/session_bus_message.ts";
