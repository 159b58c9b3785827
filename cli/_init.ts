/**
 * `anubis init [dir]`: the files of a new server project of one's own (a
 * server module, its `deno.json` with the imports from JSR and the tasks that
 * serve and test it, and a test), written without overwriting anything.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { projectFiles } from "./_init.ts";
 * const files = projectFiles();
 * assert.deepEqual(files.map((file) => file.path), ["deno.json", "server.ts", "server_test.ts"]);
 * ```
 *
 * @module
 */

/**
 * This package's version: what the written `deno.json` asks JSR for.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { CLI_VERSION, projectFiles } from "./_init.ts";
 * const config = JSON.parse(projectFiles()[0].text);
 * assert.equal(config.imports["@anubis/cli"], `jsr:@anubis/cli@^${CLI_VERSION}`);
 * ```
 */
export const CLI_VERSION = "0.1.0";

/**
 * One file of a new project.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { type ProjectFile, projectFiles } from "./_init.ts";
 * const server: ProjectFile = projectFiles().find((file) => file.path === "server.ts")!;
 * assert.match(server.text, /export default defineServer/);
 * ```
 */
export interface ProjectFile {
  /** The path inside the project directory. */
  path: string;
  /** The file's text. */
  text: string;
}

/**
 * The files of a new project: `deno.json` (imports of `@anubis/cli`,
 * `@anubis/core` and `@anubis/testing` from JSR at this version, the tasks
 * `serve`, `serve:http` and `test`), `server.ts` (a server with a tool, a
 * resource and a prompt) and `server_test.ts` (which calls them in process).
 *
 * @param version The version range's base the imports ask JSR for.
 * @returns The files, in path order.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { projectFiles } from "./_init.ts";
 * const config = JSON.parse(projectFiles("1.2.3")[0].text);
 * assert.equal(config.imports["@anubis/core"], "jsr:@anubis/core@^1.2.3");
 * assert.equal(config.tasks.serve, "deno run -A @anubis/cli serve server.ts");
 * ```
 */
export function projectFiles(version: string = CLI_VERSION): ProjectFile[] {
  const config = {
    imports: Object.fromEntries(
      ["cli", "core", "testing"].map((
        name,
      ) => [`@anubis/${name}`, `jsr:@anubis/${name}@^${version}`]),
    ),
    // kv: the cli's KV stores; no-legacy-abort: request.signal aborts only on disconnect.
    unstable: ["kv", "no-legacy-abort"],
    tasks: {
      serve: "deno run -A @anubis/cli serve server.ts",
      "serve:http": "deno run -A @anubis/cli serve server.ts --http",
      test: "deno test -A",
    },
  };
  return [
    { path: "deno.json", text: JSON.stringify(config, null, 2) + "\n" },
    { path: "server.ts", text: SERVER },
    { path: "server_test.ts", text: SERVER_TEST },
  ];
}

const SERVER = `/**
 * An MCP server. \`deno task serve\` serves it on stdio (as MCP hosts start
 * servers); \`deno task serve:http\` on http://127.0.0.1:8080/mcp.
 */

import { defineServer } from "@anubis/core";

export default defineServer({
  name: "my-server",
  version: "0.1.0",
  tools: [{
    name: "greet",
    description: "Greets someone by name",
    inputSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
    handler: ({ name }) => \`Hello, \${name}!\`, // name: string, from inputSchema
  }],
  resources: [{
    uri: "info://about",
    name: "about",
    mimeType: "text/plain",
    read: () => "A server made with anubis init.",
  }],
  prompts: [{
    name: "welcome",
    description: "Welcomes someone",
    arguments: [{ name: "who", required: true }],
    handler: ({ who }) => [{ role: "user", content: { type: "text", text: \`Welcome \${who}\` } }],
  }],
});
`;

const SERVER_TEST = `/** \`deno task test\`: the server's tool and resource, called in process. */

import assert from "node:assert/strict";
import { connect } from "@anubis/testing";
import server from "./server.ts";

Deno.test("greet says hello", async () => {
  const client = await connect(server);
  try {
    const result = await client.callTool("greet", { name: "Ada" });
    assert.deepEqual(result.content, [{ type: "text", text: "Hello, Ada!" }]);
  } finally {
    client.close();
  }
});

Deno.test("the about resource reads", async () => {
  const client = await connect(server);
  try {
    const result = await client.readResource("info://about");
    assert.deepEqual(result.contents, [
      { uri: "info://about", mimeType: "text/plain", text: "A server made with anubis init." },
    ]);
  } finally {
    client.close();
  }
});
`;

/**
 * Writes the project's files into `dir` (created if missing). Writes nothing
 * when any of them exists already, and says which.
 *
 * @param dir The project directory.
 * @param version The version the imports ask JSR for.
 * @returns The paths written.
 * @throws Error naming the files that exist already.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { initProject } from "./_init.ts";
 * const dir = await Deno.makeTempDir();
 * assert.deepEqual(await initProject(dir), [
 *   `${dir}/deno.json`,
 *   `${dir}/server.ts`,
 *   `${dir}/server_test.ts`,
 * ]);
 * await assert.rejects(initProject(dir), /exists already: .*deno\.json/);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function initProject(dir: string, version?: string): Promise<string[]> {
  const files = projectFiles(version).map((file) => ({ ...file, path: `${dir}/${file.path}` }));
  const existing: string[] = [];
  for (const file of files) {
    try {
      await Deno.lstat(file.path);
      existing.push(file.path);
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
  }
  if (existing.length > 0) {
    throw new Error(`exists already: ${existing.join(", ")} (nothing was written)`);
  }
  await Deno.mkdir(dir, { recursive: true });
  for (const file of files) await Deno.writeTextFile(file.path, file.text, { createNew: true });
  return files.map((file) => file.path);
}
