/**
 * `@anubis/cli`: `deno run -A cli/main.ts serve <server module> [options]`.
 * Serves a server module on stdio (the default) or Streamable HTTP. Every
 * error is one line on stderr and a non-zero exit code.
 *
 * @example
 * ```sh
 * deno run -A cli/main.ts serve examples/everything.ts
 * deno run -A cli/main.ts serve examples/everything.ts --http --port 8080
 * ```
 *
 * @module
 */

import { parseServeArgs, type ServeOptions, USAGE } from "./args.ts";
import { loadServer } from "./load_server.ts";
import type { McpServer } from "@anubis/core";

/**
 * Runs the command line and returns the exit code.
 *
 * @param args The arguments after the script name.
 * @returns The exit code.
 *
 * @example
 * ```ts
 * import { main } from "@anubis/cli";
 * console.log(await main(["frobnicate"])); // 2 (after one line on stderr)
 * ```
 */
export async function main(args: readonly string[]): Promise<number> {
  const parsed = parseServeArgs(args);
  if (parsed.kind === "help") {
    console.log(USAGE);
    return 0;
  }
  if (parsed.kind === "error") {
    console.error(`anubis: ${parsed.message} (see --help)`);
    return 2;
  }
  try {
    await serve(parsed.options);
    return 0;
  } catch (error) {
    console.error(`anubis: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}

async function serve(options: ServeOptions): Promise<void> {
  if (options.http) return await serveWith(options, await loadServer(options.module));
  // Before the module loads, so that its prints at top level miss stdout too.
  const { redirectConsole } = await import("@anubis/transport-stdio");
  const restoreConsole = redirectConsole();
  try {
    await serveWith(options, await loadServer(options.module));
  } finally {
    restoreConsole();
  }
}

async function serveWith(options: ServeOptions, server: McpServer): Promise<void> {
  const shutdown = new AbortController();
  const stop = () => shutdown.abort();
  Deno.addSignalListener("SIGINT", stop);
  Deno.addSignalListener("SIGTERM", stop);
  try {
    if (options.http) {
      const { serveHttp } = await import("./serve_http.ts");
      await serveHttp(server, options, shutdown.signal);
    } else {
      const { serveStdio } = await import("@anubis/transport-stdio");
      await serveStdio(server, { signal: shutdown.signal, redirectConsole: false });
    }
  } finally {
    Deno.removeSignalListener("SIGINT", stop);
    Deno.removeSignalListener("SIGTERM", stop);
  }
}

if (import.meta.main) Deno.exit(await main(Deno.args));
