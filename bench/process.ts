/**
 * Starting and stopping benchmark processes: a server is a child process
 * that prints `listening on http://…` on stderr; every child is ended by pid
 * (SIGTERM, then SIGKILL) when its measurement is done.
 *
 * @module
 */

/** A running HTTP server under test. */
export interface RunningServer {
  /** The MCP endpoint. */
  url: string;
  /** The child's pid. */
  pid: number;
  /** Milliseconds from spawn to the listening line. */
  startMs: number;
  /** Ends the process and waits for it. */
  stop(): Promise<void>;
}

/** The repository root (benchmarks run from there). */
export const ROOT: string = new URL("..", import.meta.url).pathname;

/**
 * Spawns `deno <args>` (or `command <args>`) from the repository root and
 * waits for the listening line on stderr.
 *
 * @param args The arguments after `deno` (or `command`).
 * @param timeoutMs How long to wait for the listening line.
 * @param command The program (default: this `deno`).
 * @returns The running server.
 */
export async function startServer(
  args: string[],
  timeoutMs = 30_000,
  command: string = Deno.execPath(),
): Promise<RunningServer> {
  const started = performance.now();
  const child = new Deno.Command(command, {
    args,
    cwd: ROOT,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  track(child);
  const stop = () => endProcess(child);
  const lines = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  // A timer of our own, cleared once the server listens: a pending
  // `AbortSignal.timeout` with a listener would keep the caller's process
  // alive for the whole timeout after its work is done.
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error("timeout")), timeoutMs);
  });
  let seen = "";
  try {
    while (true) {
      const { value, done } = await Promise.race([lines.read(), timedOut]);
      if (done) break;
      seen += value;
      const match = seen.match(/listening on (http:\/\/\S+)/);
      if (match) {
        const startMs = performance.now() - started;
        // Keep draining stderr so the child never blocks on a full pipe.
        (async () => {
          while (!(await lines.read()).done);
        })().catch(() => {});
        return { url: match[1], pid: child.pid, startMs, stop };
      }
    }
  } catch {
    // Reported below with what the child printed.
  } finally {
    clearTimeout(timer);
  }
  await stop();
  const said = seen.trim().split("\n").at(-1) || "no output";
  throw new Error(
    `${command === Deno.execPath() ? "deno" : command} ${args.join(" ")} did not start: ${
      said.slice(0, 300)
    }`,
  );
}

const children = new Set<Deno.ChildProcess>();

/**
 * Remembers a child until it exits, so {@link endAll} can end it.
 *
 * @param child The child.
 */
export function track(child: Deno.ChildProcess): void {
  children.add(child);
  child.status.finally(() => children.delete(child));
}

/** Ends every child still running (the orchestrator's time limit). */
export async function endAll(): Promise<void> {
  await Promise.all([...children].map((child) => endProcess(child, 500)));
}

/**
 * Ends a child process: SIGTERM, then SIGKILL after a grace period.
 *
 * @param child The child.
 * @param graceMs How long SIGTERM may take.
 */
export async function endProcess(child: Deno.ChildProcess, graceMs = 2000): Promise<void> {
  try {
    child.kill("SIGTERM");
  } catch {
    return; // Already gone.
  }
  const timer = setTimeout(() => {
    try {
      child.kill("SIGKILL");
    } catch {
      // Already gone.
    }
  }, graceMs);
  await child.status;
  clearTimeout(timer);
}

/**
 * The resident set size of a process, from `/proc` (Linux only).
 *
 * @param pid The process.
 * @returns Bytes.
 */
export function residentBytes(pid: number): number {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  const match = status.match(/VmRSS:\s+(\d+) kB/);
  if (!match) throw new Error(`no VmRSS for ${pid}`);
  return Number(match[1]) * 1024;
}

/** Clock ticks per second of `/proc/PID/stat` times (`getconf CLK_TCK`; 100 on Linux). */
const TICK_US = 10_000;

/** utime + stime + cutime + cstime of a `/proc/.../stat` line, in clock ticks, and its ppid. */
function statTicks(stat: string): { parent: number; own: number; reaped: number } {
  // Fields after the command name, which may hold spaces: ppid is the 2nd,
  // utime, stime, cutime and cstime the 12th to 15th.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return {
    parent: Number(fields[1]),
    own: Number(fields[11]) + Number(fields[12]),
    reaped: Number(fields[13]) + Number(fields[14]),
  };
}

/** The pids of `pid` and every live process under it (Linux `/proc`). */
function processTree(pid: number): Map<number, { own: number; reaped: number }> {
  const all = new Map<number, { parent: number; own: number; reaped: number }>();
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      all.set(Number(entry.name), statTicks(Deno.readTextFileSync(`/proc/${entry.name}/stat`)));
    } catch {
      continue; // Gone meanwhile.
    }
  }
  if (!all.has(pid)) throw new Error(`no process ${pid}`);
  const tree = new Map<number, { own: number; reaped: number }>();
  for (const [id, ticks] of all) {
    for (let at: number | undefined = id; at !== undefined && at > 1; at = all.get(at)?.parent) {
      if (at === pid) {
        tree.set(id, ticks);
        break;
      }
    }
  }
  return tree;
}

/**
 * CPU time a process and every process under it have used so far, user plus
 * system, from `/proc` (Linux only; assumes the usual 100 clock ticks per
 * second): the process's own time, the time of children it has already
 * reaped, and the same for every live descendant.
 *
 * @param pid The root of the process tree.
 * @returns Microseconds.
 */
export function cpuMicros(pid: number): number {
  let total = 0;
  for (const { own, reaped } of processTree(pid).values()) total += own + reaped;
  return total * TICK_US;
}

/** CPU time so far of every thread of a process tree, in microseconds, keyed `pid/tid`. */
function threadMicros(pid: number): Map<string, number> {
  const threads = new Map<string, number>();
  for (const id of processTree(pid).keys()) {
    try {
      for (const task of Deno.readDirSync(`/proc/${id}/task`)) {
        const stat = Deno.readTextFileSync(`/proc/${id}/task/${task.name}/stat`);
        threads.set(`${id}/${task.name}`, statTicks(stat).own * TICK_US);
      }
    } catch {
      continue; // Gone meanwhile.
    }
  }
  return threads;
}

/**
 * Starts watching how busy a server's busiest thread is: the function
 * returned gives that thread's CPU time since the start over the wall time
 * (1 = on a core all along), from `/proc/PID/task/TID/stat` over the process
 * tree. A JavaScript server answers on one thread (its event loop; V8's
 * helpers and the runtime's I/O threads do not carry requests), so near 1 the
 * server cannot answer faster and its rate is its own, however busy the
 * client was.
 *
 * @param pid The root of the server's process tree.
 * @returns Reads the share so far.
 */
export function watchBusiestThread(pid: number): () => number {
  const before = threadMicros(pid);
  const started = performance.now();
  return () => {
    const seconds = (performance.now() - started) / 1000;
    let busiest = 0;
    for (const [thread, micros] of threadMicros(pid)) {
      busiest = Math.max(busiest, micros - (before.get(thread) ?? 0));
    }
    return busiest / (seconds * 1e6);
  };
}

/**
 * CPU time of wrk, as its Lua `done()` read it from `/proc/self/stat`.
 *
 * @param ticks utime + stime in clock ticks.
 * @returns Microseconds.
 */
export const ticksToMicros = (ticks: number): number => ticks * TICK_US;
