/**
 * A real `redis-server` for a test: its own free port on 127.0.0.1, its own
 * directory (AOF there when asked), stopped by pid. Tests that need one skip
 * when the binary is missing (`.ci/run` installs it from Debian).
 */

/** Whether `redis-server` is on PATH. */
export const redisAvailable: boolean = (() => {
  try {
    return new Deno.Command("redis-server", { args: ["--version"], stdout: "null", stderr: "null" })
      .outputSync().success;
  } catch {
    return false;
  }
})();

/** Options of {@link startRedis}. */
export interface RedisServerOptions {
  /** Append-only file on (`appendfsync always`): restarts keep every acknowledged write. */
  aof?: boolean;
  /** The port (default: a free one). */
  port?: number;
  /** The data directory (default: a new temp dir, removed by `stop`). */
  dir?: string;
}

/** A running redis-server. */
export interface RedisServer {
  /** `redis://127.0.0.1:PORT`. */
  url: string;
  port: number;
  dir: string;
  /** The server process's pid. */
  pid: number;
  /** SIGKILLs the server (nothing flushed beyond what AOF already has). */
  kill(): Promise<void>;
  /** Starts it again on the same port and directory. */
  restart(): Promise<void>;
  /** Stops it (SIGTERM, then SIGKILL after 5 s) and removes its directory if it made it. */
  stop(): Promise<void>;
}

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

async function answersPing(port: number): Promise<boolean> {
  try {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port });
    try {
      await conn.write(new TextEncoder().encode("PING\r\n"));
      const buffer = new Uint8Array(64);
      const n = await conn.read(buffer);
      return n !== null && new TextDecoder().decode(buffer.subarray(0, n)).startsWith("+PONG");
    } finally {
      conn.close();
    }
  } catch {
    return false;
  }
}

/** Starts a redis-server on 127.0.0.1 and waits (at most 10 s) until it answers PING. */
export async function startRedis(options: RedisServerOptions = {}): Promise<RedisServer> {
  const port = options.port ?? freePort();
  const ownDir = options.dir === undefined;
  const dir = options.dir ?? await Deno.makeTempDir({ prefix: "anubis-redis-" });
  let child: Deno.ChildProcess;
  const spawn = async () => {
    child = new Deno.Command("redis-server", {
      args: [
        "--port",
        String(port),
        "--bind",
        "127.0.0.1",
        "--dir",
        dir,
        "--save",
        "",
        "--appendonly",
        options.aof ? "yes" : "no",
        "--appendfsync",
        "always",
        "--protected-mode",
        "no",
        "--loglevel",
        "warning",
      ],
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    const deadline = Date.now() + 10_000;
    while (!(await answersPing(port))) {
      if (Date.now() > deadline) throw new Error(`redis-server did not answer on port ${port}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  };
  await spawn();
  const halt = async (signal: Deno.Signal) => {
    try {
      child.kill(signal);
    } catch {
      // already gone
    }
    const timer = setTimeout(() => {
      try {
        child.kill("SIGKILL");
      } catch {
        // gone
      }
    }, 5_000);
    await child.status;
    clearTimeout(timer);
  };
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    dir,
    get pid() {
      return child.pid;
    },
    kill: () => halt("SIGKILL"),
    restart: spawn,
    async stop() {
      await halt("SIGTERM");
      if (ownDir) await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}
