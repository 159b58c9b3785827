/**
 * A `cli serve` child process on stdio, driven with raw newline-delimited
 * JSON-RPC: what the end-to-end stdio tests use to assert exact wire shapes.
 *
 * @module
 */

const ROOT = new URL("../..", import.meta.url);

/** A running server and its pipes. */
export interface StdioChild {
  /** Writes raw bytes (or text) to the server's stdin. */
  send(text: string | Uint8Array): Promise<void>;
  /** Waits for (and removes) the first stdout message matching `match`. */
  next(
    match: (m: Record<string, unknown>) => boolean,
    timeoutMs?: number,
  ): Promise<Record<string, unknown>>;
  /** Waits until stdout has written `count` lines in all. */
  lineCount(count: number, timeoutMs?: number): Promise<void>;
  /** Every stdout line so far, in order, as written (JSON or not). */
  readonly lines: readonly string[];
  /** Sends a signal to the process. */
  kill(signal: Deno.Signal): void;
  /**
   * Ends stdin and waits for the process to exit; one still running 8 s later
   * (hung on its way out) is killed, and `killed` says so.
   */
  close(): Promise<{ code: number; stderr: string; killed: boolean }>;
}

/** How {@linkcode spawnServe} starts the child. */
export interface SpawnServeOptions {
  /** Where the child's stderr goes: `"piped"` (the default) to read it, `"null"` to drop it. */
  stderr?: "piped" | "inherit" | "null";
  /** Variables added to the inherited environment. */
  env?: Record<string, string>;
}

/**
 * Spawns `deno run -A cli/main.ts serve <module>` from the repository root
 * with stdin and stdout piped: the one place the end-to-end tests start the
 * CLI serving a module over stdio. The caller owns the pipes and the process.
 */
export function spawnServe(module: string, options: SpawnServeOptions = {}): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "cli/main.ts", "serve", module],
    cwd: ROOT,
    stdin: "piped",
    stdout: "piped",
    stderr: options.stderr ?? "piped",
    env: options.env,
  }).spawn();
}

/**
 * What an official SDK's `StdioClientTransport` needs to start `cli serve
 * <module>` from the repository root. The SDKs hand a child only a default
 * environment (HOME, PATH, ...), so without this the child would miss
 * `DENO_DIR` and fill a cold cache of its own before answering. The child's
 * stderr is the test's (a line or two; what explains a child that failed to
 * start): a piped stderr nobody reads would stall a child that writes more
 * than the pipe holds.
 */
export function serveParams(module: string): {
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  stderr: "inherit";
} {
  return {
    command: Deno.execPath(),
    args: ["run", "-A", "cli/main.ts", "serve", module],
    cwd: ROOT.pathname,
    env: Deno.env.toObject(),
    stderr: "inherit",
  };
}

/**
 * Starts the CLI on a fixture (with `env` added to its environment) and
 * collects every stdout line as JSON; its stderr is read to the end.
 */
export function start(module = "examples/hello.ts", env?: Record<string, string>): StdioChild {
  const child = spawnServe(module, { env });
  const writer = child.stdin.getWriter();
  const messages: Record<string, unknown>[] = [];
  const lines: string[] = [];
  const waiters: (() => void)[] = [];
  const reading = (async () => {
    let buffer = "";
    for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
      buffer += chunk;
      let nl;
      while ((nl = buffer.indexOf("\n")) !== -1) {
        const line = buffer.slice(0, nl);
        lines.push(line);
        buffer = buffer.slice(nl + 1);
        try {
          messages.push(JSON.parse(line));
        } catch {
          // Not JSON: kept in `lines` for the test to see.
        }
        waiters.splice(0).forEach((w) => w());
      }
    }
  })();
  const stderr = new Response(child.stderr).text();
  /** Waits (waking on each line) until `done`, or throws `failure()` after `timeoutMs`. */
  async function until(done: () => boolean, timeoutMs: number, failure: () => string) {
    const deadline = Date.now() + timeoutMs;
    while (!done()) {
      if (Date.now() > deadline) throw new Error(failure());
      await new Promise<void>((r) => {
        waiters.push(r);
        setTimeout(r, 100);
      });
    }
  }
  return {
    lines,
    kill: (signal: Deno.Signal) => child.kill(signal),
    send: (text: string | Uint8Array) =>
      writer.write(typeof text === "string" ? new TextEncoder().encode(text) : text),
    /** Waits for a message matching `match`. */
    async next(match: (m: Record<string, unknown>) => boolean, timeoutMs = 10_000) {
      let found = -1;
      await until(
        () => (found = messages.findIndex(match)) !== -1,
        timeoutMs,
        () => `no matching message in ${JSON.stringify(messages)}`,
      );
      return messages.splice(found, 1)[0];
    },
    lineCount(count: number, timeoutMs = 10_000) {
      return until(
        () => lines.length >= count,
        timeoutMs,
        () => `${lines.length} of ${count} lines:\n${lines.join("\n")}`,
      );
    },
    async close() {
      await writer.close().catch(() => {});
      let timer: ReturnType<typeof setTimeout> | undefined;
      const exited = await Promise.race([
        child.status.then(() => true),
        new Promise<false>((resolve) => timer = setTimeout(() => resolve(false), 8_000)),
      ]);
      clearTimeout(timer);
      if (!exited) child.kill("SIGKILL");
      const status = await child.status;
      await reading;
      return { code: status.code, stderr: await stderr, killed: !exited };
    },
  };
}

/** Opens a legacy session: `initialize` at `version`, then `notifications/initialized`. */
export async function handshake(
  server: StdioChild,
  version: string,
  capabilities: Record<string, unknown> = {},
): Promise<void> {
  await server.send(
    JSON.stringify({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: version, capabilities, clientInfo: { name: "raw", version: "0" } },
    }) + '\n{"jsonrpc":"2.0","method":"notifications/initialized"}\n',
  );
  await server.next((m) => m.id === 0);
}

/** A stateless (2026-07-28) `tools/list` request as one line; `examples/everything.ts` answers it with about 6 KB. */
export function statelessToolsList(id: number): string {
  return JSON.stringify({
    jsonrpc: "2.0",
    id,
    method: "tools/list",
    params: {
      _meta: {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
      },
    },
  }) + "\n";
}
