/**
 * `@anubis/cli`: `serve <server module> [options]` and `init [dir]` on Deno.
 * Serves a server module on stdio (the default) or Streamable HTTP, or writes
 * a new project. Every error is one line on
 * stderr and a non-zero exit code. Started by Node, it says that it needs
 * Deno and exits 1.
 *
 * @example
 * ```sh
 * # From a checkout of this repository (npx fetches Deno):
 * npx deno@2.9.6 run -A cli/main.ts serve examples/everything.ts
 * npx deno@2.9.6 run -A cli/main.ts serve examples/everything.ts --http --port 8080
 * ```
 *
 * @module
 */

import { parseArgs, type ServeOptions, USAGE } from "./_args.ts";
import { loadServer } from "./_load_server.ts";
import { configureLogger, logger, type McpServer } from "@anubis/core";

/**
 * Runs the command line and returns the exit code.
 *
 * @param args The arguments after the script name.
 * @returns The exit code.
 *
 * @example
 * ```ts
 * import { main } from "@anubis/cli";
 * import assert from "node:assert/strict";
 * assert.equal(await main(["frobnicate"]), 2); // after one line on stderr
 * ```
 */
export async function main(args: readonly string[]): Promise<number> {
  const parsed = parseArgs(args);
  if (parsed.kind === "help") {
    console.log(USAGE);
    return 0;
  }
  if (parsed.kind === "error") {
    console.error(`anubis: ${parsed.message} (see --help)`);
    return 2;
  }
  try {
    if (parsed.kind === "init") {
      const { initProject } = await import("./_init.ts");
      for (const path of await initProject(parsed.dir)) console.error(`anubis: wrote ${path}`);
      console.error(`anubis: next: cd ${parsed.dir} && deno task test && deno task serve:http`);
      return 0;
    }
    configureLogger({ level: parsed.options.logLevel, format: parsed.options.logFormat });
    await serve(parsed.options);
    return 0;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (parsed.kind === "serve") logger.error("serve.failed", message);
    else console.error(`anubis: ${message}`);
    return 1;
  }
}

async function serve(options: ServeOptions): Promise<void> {
  if (options.http) {
    return await serveWith(options, await instrument(await loadServer(options.module)));
  }
  // Before the module loads, so that its prints at top level miss stdout too.
  const { redirectConsole } = await import("@anubis/transport-stdio");
  const restoreConsole = redirectConsole();
  try {
    await serveWith(options, await instrument(await loadServer(options.module)));
  } finally {
    restoreConsole();
  }
}

/**
 * With Deno's built-in OpenTelemetry on (`OTEL_DENO=true`), the server with
 * the telemetry middleware first; else the server as loaded (nothing of
 * OpenTelemetry is loaded).
 */
async function instrument(server: McpServer): Promise<McpServer> {
  if (!/^(true|1)$/i.test(Deno.env.get("OTEL_DENO") ?? "")) return server;
  const { telemetry } = await import("@anubis/telemetry");
  const middleware = [telemetry(), ...(server.definition.middleware ?? [])];
  return { ...server, definition: { ...server.definition, middleware } };
}

async function serveWith(options: ServeOptions, server: McpServer): Promise<void> {
  const shutdown = new AbortController();
  const stop = () => shutdown.abort();
  Deno.addSignalListener("SIGINT", stop);
  Deno.addSignalListener("SIGTERM", stop);
  try {
    if (options.http) {
      const { serveHttp } = await import("./_serve_http.ts");
      await serveHttp(server, options, shutdown.signal);
    } else {
      const { serveStdio } = await import("@anubis/transport-stdio");
      logger.info("listening", "serving on stdio", { transport: "stdio" });
      await serveStdio(server, { signal: shutdown.signal, redirectConsole: false });
    }
  } finally {
    Deno.removeSignalListener("SIGINT", stop);
    Deno.removeSignalListener("SIGTERM", stop);
  }
}

/** The line the CLI prints when a runtime other than Deno starts it. */
const NEEDS_DENO = "anubis: the CLI runs on Deno; with only Node and npm, start it as " +
  "`npx deno@2.9.6 run -A jsr:@anubis/cli serve <module>` (from a checkout: " +
  "`npx deno@2.9.6 run -A cli/main.ts serve <module>`)";

/** Node's process, when Node runs this module. */
const nodeProcess = (globalThis as { process?: { argv: string[]; exitCode?: number } }).process;

if (typeof Deno !== "undefined") {
  if (import.meta.main) Deno.exit(await main(Deno.args));
} else if (nodeProcess && new URL(import.meta.url).pathname === nodeProcess.argv[1]) {
  // Started by Node as a script (not imported): say what it needs instead of exiting 0.
  console.error(NEEDS_DENO);
  nodeProcess.exitCode = 1;
}
