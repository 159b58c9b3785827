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
  const tree = new Map<number, { parent: number; ticks: number }>();
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    let stat;
    try {
      stat = Deno.readTextFileSync(`/proc/${entry.name}/stat`);
    } catch {
      continue; // Gone meanwhile.
    }
    // Fields after the command name, which may hold spaces: ppid is the 2nd,
    // utime, stime, cutime and cstime the 12th to 15th.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(fields[11]) + Number(fields[12]) + Number(fields[13]) +
      Number(fields[14]);
    tree.set(Number(entry.name), { parent: Number(fields[1]), ticks });
  }
  if (!tree.has(pid)) throw new Error(`no process ${pid}`);
  let total = 0;
  for (const [id, { ticks }] of tree) {
    for (let at: number | undefined = id; at !== undefined && at > 1; at = tree.get(at)?.parent) {
      if (at === pid) {
        total += ticks;
        break;
      }
    }
  }
  return total * TICK_US;
}

/**
 * CPU time of wrk, as its Lua `done()` read it from `/proc/self/stat`.
 *
 * @param ticks utime + stime in clock ticks.
 * @returns Microseconds.
 */
export const ticksToMicros = (ticks: number): number => ticks * TICK_US;
