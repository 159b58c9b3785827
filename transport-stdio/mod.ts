/**
 * `@anubis/transport-stdio`: serve an MCP server as a child process speaking
 * newline-delimited JSON-RPC on stdin/stdout (or any stream pair), the way
 * MCP hosts start local servers.
 *
 * @example
 * ```ts ignore
 * import { defineServer } from "@anubis/core";
 * import { serveStdio } from "@anubis/transport-stdio";
 * await serveStdio(defineServer({ name: "hello", version: "1.0.0" }));
 * ```
 *
 * @module
 */

export { serveStdio, type StdioOptions } from "./stdio_transport.ts";
export { redirectConsole } from "./console_redirect.ts";
