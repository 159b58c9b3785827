/**
 * `cli serve examples/everything.ts --http` as a child process on a free port.
 *
 * @module
 */

const ROOT = new URL("..", import.meta.url).pathname;

/** A server process serving the everything example over HTTP on a free port. */
export async function startHttpServer(): Promise<{ url: URL; stop(): Promise<void> }> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "cli/main.ts", "serve", "examples/everything.ts", "--http", "--port", "0"],
    cwd: ROOT,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const lines = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  let url: URL | undefined;
  while (!url) {
    const { value, done } = await lines.read();
    if (done) throw new Error(`the server did not start:\n${seen}`);
    seen += value;
    const found = seen.match(/listening on (http:\/\/\S+)/);
    if (found) url = new URL(found[1]);
  }
  // Keep draining stderr so the child never blocks on it.
  const drained = (async () => {
    while (!(await lines.read()).done) { /* discard */ }
  })();
  return {
    url,
    async stop() {
      child.kill("SIGTERM");
      await child.status;
      await drained;
    },
  };
}
