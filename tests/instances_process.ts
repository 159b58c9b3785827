/**
 * Test helpers for many `cli serve` processes on one KV file: start an
 * instance of the everything server, find its URL from the line it prints,
 * stop it gently or kill it, and route one client's requests to whichever
 * instance the test chooses.
 *
 * @module
 */

const ROOT = new URL("..", import.meta.url);

/** A running `cli serve --http` child process. */
export interface Instance {
  /** Its endpoint, e.g. `http://127.0.0.1:41234/mcp`. */
  readonly url: string;
  /** Stops it with `signal` (default SIGTERM) and returns its exit code and stderr. */
  stop(signal?: Deno.Signal): Promise<{ code: number; stderr: string }>;
}

/**
 * Starts `cli serve examples/everything.ts --http --port 0` with both stores
 * on the KV file `kvPath`, and waits for its "listening on" line.
 */
export async function startInstance(kvPath: string): Promise<Instance> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "cli/main.ts",
      "serve",
      "examples/everything.ts",
      "--http",
      "--port",
      "0",
      "--event-store",
      `kv:${kvPath}`,
      "--session-store",
      `kv:${kvPath}`,
    ],
    cwd: ROOT,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const lines = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  let url: string | undefined;
  while (!url) {
    const { value, done } = await lines.read();
    if (done) break;
    seen += value;
    url = seen.match(/anubis: listening on (http:\/\/\S+)\n/)?.[1];
  }
  const rest = (async () => {
    for (let r = await lines.read(); !r.done; r = await lines.read()) seen += r.value;
    return seen;
  })();
  if (!url) {
    await child.status;
    throw new Error(`the instance did not start: ${await rest}`);
  }
  let stopped: Promise<{ code: number; stderr: string }> | undefined;
  return {
    url,
    stop(signal: Deno.Signal = "SIGTERM") {
      stopped ??= (async () => {
        child.kill(signal);
        const status = await child.status;
        return { code: status.code, stderr: await rest };
      })();
      return stopped;
    },
  };
}

/**
 * A `fetch` for the SDK's transport that sends each request to the instance
 * the test currently names, whatever URL the transport was given: one client
 * session driven through several processes, as a load balancer would.
 */
export class Router {
  /** Where the next request of each kind goes. */
  target: { post: string; get: string; delete: string };
  /** Every request routed: method and the instance URL it went to. */
  readonly log: { method: string; url: string }[] = [];
  /** The routed requests whose response headers arrived. */
  readonly answered: { method: string; url: string; status: number }[] = [];

  /** Routes every request to `url` until told otherwise. */
  constructor(url: string) {
    this.target = { post: url, get: url, delete: url };
  }

  /** The `fetch` to hand to `StreamableHTTPClientTransport`. */
  readonly fetch = (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const method = (init?.method ?? (input instanceof Request ? input.method : "GET"))
      .toUpperCase();
    const url = method === "POST"
      ? this.target.post
      : method === "DELETE"
      ? this.target.delete
      : this.target.get;
    this.log.push({ method, url });
    return fetch(url, init).then((response) => {
      this.answered.push({ method, url, status: response.status });
      return response;
    });
  };
}
