/**
 * `serve --http`: Streamable HTTP is not part of this build yet.
 *
 * @module
 */

import type { McpServer } from "@anubis/core";
import type { ServeOptions } from "./args.ts";

/**
 * Serves over Streamable HTTP.
 *
 * @param _server The server.
 * @param _options The command-line options.
 * @param _signal Stops serving.
 * @returns Never resolves: it rejects until `@anubis/transport-http` lands.
 *
 * @example
 * ```ts ignore
 * import { serveHttp } from "./serve_http.ts";
 * ```
 */
export function serveHttp(
  _server: McpServer,
  _options: ServeOptions,
  _signal: AbortSignal,
): Promise<void> {
  return Promise.reject(
    new Error("--http needs @anubis/transport-http, which is not in this build yet"),
  );
}
