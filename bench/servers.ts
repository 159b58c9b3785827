/**
 * Every process the benchmarks start, by name: how to run it with `deno`.
 * Names are the row names in RESULTS.md. The Node servers are built at run
 * time (`node.ts`).
 *
 * @module
 */

/** A server under test. */
export interface ServerSpec {
  /** The row name. */
  name: string;
  /** The arguments after the command. */
  args: string[];
  /** The program run (default: this `deno`); the Node servers run with `node`. */
  command?: string;
  /** stdio rows: the calls sent (default stateless; `legacy`: in a 2025-11-25 session). */
  era?: "stateless" | "legacy";
}

const CLI = ["run", "-A", "cli/main.ts", "serve", "bench/servers/echo_server.ts"];
const run = (
  script: string,
  ...rest: string[]
) => ["run", "-A", `bench/servers/${script}`, ...rest];

/** HTTP servers. */
export const HTTP = {
  raw: { name: "raw Deno.serve", args: run("raw_http.ts") },
  cli: { name: "anubis cli serve", args: [...CLI, "--http", "--port", "0"] },
  handler: { name: "anubis handler", args: run("anubis_http.ts") },
  handlerManySessions: {
    name: "anubis handler",
    args: run("anubis_http.ts", "--max-sessions=1000000"),
  },
  official: { name: "official SDK v2", args: run("official_http.ts", "stateless") },
  officialSessions: { name: "official SDK v2", args: run("official_http.ts", "sessions") },
  tmcp: { name: "tmcp", args: run("tmcp_http.ts") },
} satisfies Record<string, ServerSpec>;

/** stdio servers. */
export const STDIO = {
  raw: { name: "raw line echo", args: run("raw_stdio.ts") },
  cli: { name: "anubis cli serve", args: CLI },
  cliLegacy: { name: "anubis cli serve, 2025-11-25 session", args: CLI, era: "legacy" },
  official: { name: "official SDK v2", args: run("official_stdio.ts") },
  tmcp: { name: "tmcp", args: run("tmcp_stdio.ts") },
} satisfies Record<string, ServerSpec>;

/**
 * The same server started with `--v8-flags=--expose-gc`, which turns on its
 * `POST /__bench/gc` hook (see `servers/listening.ts`).
 *
 * @param spec The server.
 * @returns The spec with the flag.
 */
export function withGcHook(spec: ServerSpec): ServerSpec {
  const [command, ...rest] = spec.args;
  return { ...spec, args: [command, "--v8-flags=--expose-gc", ...rest] };
}
