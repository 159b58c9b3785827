/** `cli serve <module> --http` as a child process for end-to-end tests. */

const ROOT = new URL("../..", import.meta.url);

/** A running CLI child. */
export interface CliChild {
  /** The first line it printed on stderr ("anubis: listening on URL"). */
  firstLine: string;
  /** SIGTERMs it and returns its exit code and everything it printed on stderr. */
  stop(): Promise<{ code: number; stderr: string }>;
}

/** Spawns `cli serve module --http ...flags` and waits for its first stderr line. */
export async function spawnCli(module: string, ...flags: string[]): Promise<CliChild> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "cli/main.ts", "serve", module, "--http", ...flags],
    cwd: ROOT,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const lines = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  while (!seen.includes("\n")) {
    const { value, done } = await lines.read();
    if (done) break;
    seen += value;
  }
  const rest = (async () => {
    for (let r = await lines.read(); !r.done; r = await lines.read()) seen += r.value;
    return seen;
  })();
  return {
    firstLine: seen.split("\n")[0],
    async stop() {
      child.kill("SIGTERM");
      const status = await child.status;
      return { code: status.code, stderr: await rest };
    },
  };
}
