/**
 * The Node servers of the benchmark (`bench/servers/node/`), built to plain
 * JavaScript for Node 20: each server module is bundled by `deno bundle`
 * (this SDK's TypeScript and the bench glue inlined; npm packages left as
 * bare imports) into a `.mjs` in a temporary folder, and the npm packages
 * are installed next to it by npm, at the versions pinned in
 * `bench/deno.json` (and `ajv` from the root `deno.json`, `hono` from
 * `deno.lock`), so the official SDK runs from `node_modules` exactly as
 * published. Every step is bounded in time.
 *
 * @module
 */

import { ROOT } from "./process.ts";
import type { ServerSpec } from "./servers.ts";

/** How long `npm install` may take. */
const NPM_TIMEOUT_MS = 180_000;
/** How long bundling one server may take. */
const BUNDLE_TIMEOUT_MS = 60_000;

/** The npm packages the bundles import, bare (kept out of the bundles). */
const EXTERNAL = ["@hono/node-server", "@modelcontextprotocol/node", "@modelcontextprotocol/server"]
  .concat(["zod", "ajv"]);

/** The Node servers, once built. */
export interface NodeServers {
  /** raw `node:http` JSON echo, no MCP work (the ceiling). */
  raw: ServerSpec;
  /** This SDK's handler on `node:http` through `@hono/node-server`. */
  anubis: ServerSpec;
  /** The official SDK v2 stateless (`toNodeHandler(createMcpHandler(...))`). */
  official: ServerSpec;
  /** The official SDK v2 with one `NodeStreamableHTTPServerTransport` per session. */
  officialSessions: ServerSpec;
  /** The folder holding the bundles and `node_modules`. */
  dir: string;
  /** Removes the folder. */
  remove(): Promise<void>;
}

async function versionOf(command: string): Promise<string | undefined> {
  try {
    const { success, stdout } = await new Deno.Command(command, {
      args: ["--version"],
      stdout: "piped",
      stderr: "null",
    }).output();
    return success ? new TextDecoder().decode(stdout).trim() : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The Node version, or undefined when `node` (and `npm`, which builds the
 * servers) is not installed. Deno runs itself when asked to spawn a `node`
 * that is not on the PATH, so the answer must look like Node's (`v20.…`).
 *
 * @returns `v20.…`, or undefined.
 */
export async function nodeVersion(): Promise<string | undefined> {
  const version = await versionOf("node");
  if (!version || !/^v\d+\./.test(version)) return undefined;
  return (await versionOf("npm")) === undefined ? undefined : version;
}

async function run(command: string, args: string[], cwd: string, timeoutMs: number) {
  const output = await new Deno.Command(command, {
    args,
    cwd,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(timeoutMs),
  }).output();
  if (!output.success) {
    const said = new TextDecoder().decode(output.stderr).trim().split("\n").slice(-5).join(" ");
    throw new Error(`${command} ${args.join(" ")} failed: ${said.slice(0, 400)}`);
  }
}

/** The npm versions to install: `name → version`, from the pins this repository already has. */
async function pins(): Promise<Record<string, string>> {
  const read = async (path: string) => JSON.parse(await Deno.readTextFile(`${ROOT}${path}`));
  const imports = {
    ...(await read("deno.json")).imports,
    ...(await read("bench/deno.json")).imports,
  };
  const versions: Record<string, string> = {};
  for (const name of EXTERNAL) {
    const match = String(imports[name]).match(/^npm:(@?[^@]+)@(.+)$/);
    if (!match || match[1] !== name) throw new Error(`no npm pin for ${name}`);
    versions[name] = match[2];
  }
  // hono comes with @hono/node-server's peer range; take the version deno.lock resolved.
  const lock = JSON.stringify(await read("deno.lock"));
  const hono = lock.match(/"hono@(\d+\.\d+\.\d+)"/)?.[1];
  if (hono) versions.hono = hono;
  return versions;
}

/**
 * Builds the Node servers into a fresh temporary folder.
 *
 * @param log Progress lines.
 * @returns The servers, to start with `command: "node"`.
 */
export async function buildNodeServers(
  log: (line: string) => void = () => {},
): Promise<NodeServers> {
  const dir = await Deno.makeTempDir({ prefix: "anubis_bench_node_" });
  const remove = () => Deno.remove(dir, { recursive: true }).catch(() => {});
  try {
    const dependencies = await pins();
    await Deno.writeTextFile(
      `${dir}/package.json`,
      JSON.stringify({ private: true, type: "module", dependencies }, null, 2),
    );
    log(`node: npm install ${Object.entries(dependencies).map(([n, v]) => `${n}@${v}`).join(" ")}`);
    await run(
      "npm",
      ["install", "--no-audit", "--no-fund", "--ignore-scripts", "--prefer-offline", "--silent"],
      dir,
      NPM_TIMEOUT_MS,
    );
    const externals = EXTERNAL.flatMap((name) => ["--external", name, "--external", `${name}/*`]);
    for (const script of ["raw", "anubis", "official"]) {
      log(`node: deno bundle bench/servers/node/${script}.ts`);
      await run(
        Deno.execPath(),
        [
          "bundle",
          "--quiet",
          ...externals,
          "-o",
          `${dir}/${script}.mjs`,
          `bench/servers/node/${script}.ts`,
        ],
        ROOT,
        BUNDLE_TIMEOUT_MS,
      );
    }
  } catch (error) {
    await remove();
    throw error;
  }
  const spec = (name: string, script: string, ...rest: string[]): ServerSpec => ({
    name,
    command: "node",
    args: [`${dir}/${script}.mjs`, ...rest],
  });
  return {
    raw: spec("raw node:http", "raw"),
    anubis: spec("anubis on Node", "anubis"),
    official: spec("official SDK v2 on Node", "official", "stateless"),
    officialSessions: spec("official SDK v2 on Node", "official", "sessions"),
    dir,
    remove,
  };
}
