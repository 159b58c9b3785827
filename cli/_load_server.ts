/**
 * Loads a server module and takes its default export.
 *
 * @module
 */

import { defineServer, type McpServer, type ServerDefinition } from "@anubis/core";

function isServer(value: unknown): value is McpServer {
  return typeof value === "object" && value !== null && "definition" in value &&
    "notify" in value &&
    "info" in value;
}

function isDefinition(value: unknown): value is ServerDefinition {
  return typeof value === "object" && value !== null &&
    typeof (value as ServerDefinition).name === "string" &&
    typeof (value as ServerDefinition).version === "string";
}

/**
 * Imports a module and returns its default export as a server: a
 * `defineServer()` result, or a plain definition object (which is defined
 * here).
 *
 * @param specifier A path (relative to the working directory) or a URL.
 * @returns The server.
 * @throws {Error} With a one-line message for a missing file, a module that
 * fails to load, or a default export that is not a server.
 *
 * @example
 * ```ts
 * import { loadServer } from "./_load_server.ts";
 * import assert from "node:assert/strict";
 * const server = await loadServer(new URL("../examples/everything.ts", import.meta.url).href);
 * assert.equal(server.info.name, "anubis-everything");
 * ```
 */
export async function loadServer(specifier: string): Promise<McpServer> {
  let url: string;
  if (/^[a-z][a-z0-9+.-]*:/i.test(specifier) && !/^[a-z]:[\\/]/i.test(specifier)) {
    url = specifier;
  } else {
    const file = fileUrlOf(specifier, Deno.cwd());
    try {
      Deno.statSync(file);
    } catch {
      throw new Error(`server module not found: ${specifier}`);
    }
    url = file.href;
  }
  let module: { default?: unknown };
  try {
    module = await import(url);
  } catch (error) {
    const reason = error instanceof Error ? error.message.split("\n")[0] : String(error);
    throw new Error(`cannot load server module ${specifier}: ${reason}`);
  }
  const exported = module.default;
  if (isServer(exported) || isDefinition(exported)) {
    try {
      const server = isServer(exported) ? exported : defineServer(exported);
      // A valibot schema is converted once its converter loaded: a failure stops the start.
      await server.ready;
      return server;
    } catch (error) {
      throw new Error(`invalid server definition in ${specifier}: ${(error as Error).message}`);
    }
  }
  throw new Error(
    `${specifier} has no server as its default export (export default defineServer({ … }))`,
  );
}

/**
 * The `file:` URL of a path, relative to `cwd` unless absolute (POSIX, a
 * Windows drive or a UNC path), as `node:url`'s `pathToFileURL` makes it:
 * written here because importing Node's modules costs `cli serve` about
 * 12 ms of every start.
 *
 * @param path The path.
 * @param cwd The directory a relative path starts from.
 * @returns The URL.
 *
 * @example
 * ```ts
 * import { fileUrlOf } from "./_load_server.ts";
 * import assert from "node:assert/strict";
 * assert.equal(fileUrlOf("examples/hello.ts", "/srv/app").href, "file:///srv/app/examples/hello.ts");
 * assert.equal(fileUrlOf("C:\\app\\my server.ts", "D:\\").href, "file:///C:/app/my%20server.ts");
 * ```
 */
export function fileUrlOf(path: string, cwd: string): URL {
  // `%`, `#` and `?` are parts of a file name, not of a URL.
  const escaped = (text: string) =>
    text.replaceAll("\\", "/").replaceAll("%", "%25").replaceAll("#", "%23").replaceAll("?", "%3F");
  const rooted = (text: string) => /^[a-z]:\//i.test(text) ? `/${text}` : text;
  let base = rooted(escaped(cwd));
  if (!base.endsWith("/")) base += "/";
  // `//host/share/` (UNC) names a host; anything else is a local path.
  const origin = base.startsWith("//") ? "file:" : base.startsWith("/") ? "file://" : "file:///";
  return new URL(rooted(escaped(path)), origin + base);
}
