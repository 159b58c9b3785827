/**
 * A `cli serve` child process on stdio, driven with raw newline-delimited
 * JSON-RPC: what the end-to-end stdio tests use to assert exact wire shapes.
 *
 * @module
 */

const ROOT = new URL("..", import.meta.url);

/** A running server and its pipes. */
export interface StdioChild {
  /** Writes raw bytes (or text) to the server's stdin. */
  send(text: string | Uint8Array): Promise<void>;
  /** Waits for (and removes) the first stdout message matching `match`. */
  next(
    match: (m: Record<string, unknown>) => boolean,
    timeoutMs?: number,
  ): Promise<Record<string, unknown>>;
  /** Ends stdin and waits for the process to exit. */
  close(): Promise<{ code: number; stderr: string }>;
}

/** Starts the CLI on a fixture and collects every stdout line as JSON. */
export function start(module = "examples/hello.ts"): StdioChild {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "cli/main.ts", "serve", module],
    cwd: ROOT,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  const messages: Record<string, unknown>[] = [];
  const waiters: (() => void)[] = [];
  const reading = (async () => {
    let buffer = "";
    for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
      buffer += chunk;
      let nl;
      while ((nl = buffer.indexOf("\n")) !== -1) {
        messages.push(JSON.parse(buffer.slice(0, nl)));
        buffer = buffer.slice(nl + 1);
        waiters.splice(0).forEach((w) => w());
      }
    }
  })();
  const stderr = new Response(child.stderr).text();
  return {
    send: (text: string | Uint8Array) =>
      writer.write(typeof text === "string" ? new TextEncoder().encode(text) : text),
    /** Waits for a message matching `match`. */
    async next(match: (m: Record<string, unknown>) => boolean, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (true) {
        const found = messages.findIndex(match);
        if (found !== -1) return messages.splice(found, 1)[0];
        if (Date.now() > deadline) {
          throw new Error(`no matching message in ${JSON.stringify(messages)}`);
        }
        await new Promise<void>((r) => {
          waiters.push(r);
          setTimeout(r, 100);
        });
      }
    },
    async close() {
      await writer.close();
      const status = await child.status;
      await reading;
      return { code: status.code, stderr: await stderr };
    },
  };
}
