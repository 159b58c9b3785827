/**
 * `cli serve <module> --http` as a child process, found from the line it
 * prints on stderr; `startHttpServer` serves the everything example on a
 * free port.
 *
 * @module
 */

const ROOT = new URL("../..", import.meta.url).pathname;

/** A running server process. */
export interface HttpServerProcess {
  /** Its endpoint. */
  url: URL;
  /** The first line it printed on stderr (normally "anubis: listening on URL"). */
  firstLine: string;
  /** Stops it with `signal` (default SIGTERM); resolves its exit code and stderr. Idempotent. */
  stop(signal?: Deno.Signal): Promise<{ code: number; stderr: string }>;
}

/**
 * A server process serving the everything example over HTTP on a free port,
 * with `flags` added to its command line (stores, for instance) and `env`
 * added to its environment.
 */
export function startHttpServer(
  flags: string[] = [],
  env: Record<string, string> = {},
): Promise<HttpServerProcess> {
  return startCli("examples/everything.ts", ["--port", "0", ...flags], env);
}

/**
 * Spawns `cli serve module --http ...flags` (with `env` added to its
 * environment) and waits for its "listening on" line; rejects with what it
 * printed when it exits before listening.
 */
export async function startCli(
  module: string,
  flags: string[] = [],
  env: Record<string, string> = {},
): Promise<HttpServerProcess> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "cli/main.ts",
      "serve",
      module,
      "--http",
      ...flags,
    ],
    cwd: ROOT,
    env,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const lines = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  let url: URL | undefined;
  while (!url) {
    const { value, done } = await lines.read();
    if (done) {
      await child.status;
      throw new Error(`the server did not start:\n${seen}`);
    }
    seen += value;
    const found = seen.match(/listening on (http:\/\/[^\s"]+)/);
    if (found) url = new URL(found[1]);
  }
  // Keep draining stderr so the child never blocks on it.
  const drained = (async () => {
    for (let r = await lines.read(); !r.done; r = await lines.read()) seen += r.value;
    return seen;
  })();
  let stopped: Promise<{ code: number; stderr: string }> | undefined;
  return {
    url,
    firstLine: seen.split("\n")[0],
    stop(signal: Deno.Signal = "SIGTERM") {
      stopped ??= (async () => {
        child.kill(signal);
        // A child that does not end within 15 s (hung on its way out) is killed, so no
        // test waits forever for it.
        const bound = setTimeout(() => {
          try {
            child.kill("SIGKILL");
          } catch {
            // Ended meanwhile.
          }
        }, 15_000);
        const { code } = await child.status;
        clearTimeout(bound);
        return { code, stderr: await drained };
      })();
      return stopped;
    },
  };
}
