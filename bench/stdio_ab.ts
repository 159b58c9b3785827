/**
 * Same-run A/B of the stdio server across source trees, as `ab.ts` is for
 * HTTP: each tree's `cli/main.ts serve bench/servers/echo_server.ts` is run
 * as a child over real stdin/stdout pipes (`loadStdio`: `tools/call` kept in
 * flight, the child pinned to one core and this client to the other), the
 * trees taken in turn for many short rounds (a fresh process each, each round
 * starting one tree later), and compared by the median of the child's CPU
 * time per request, which moves much less with the machine's load than the
 * rate.
 *
 * ```sh
 * git worktree add --detach /tmp/before HEAD~1
 * deno run -A bench/stdio_ab.ts /tmp/before .                    # both eras, 8 rounds of 1.5 s
 * deno run -A bench/stdio_ab.ts --era=legacy --rounds=12 /tmp/before .
 * deno run -A bench/stdio_ab.ts --in-flight=1 /tmp/before .
 * ```
 *
 * Each argument is a tree (a checkout of this repository); its server runs
 * with the tree's own `deno.json`. Options: `--era=stateless|legacy|both`
 * (2026-07-28 calls, or calls in one 2025-11-25 session opened first),
 * `--rounds=N`, `--seconds=S` (measured per round, after 0.5 s of warm-up),
 * `--in-flight=N` (default 32). Each row gives the medians, the spread
 * (min–max) and every round's figure. Differences under about 3% are noise
 * on a shared 2-core machine: repeat before believing one.
 *
 * @module
 */

import { loadStdio, type StdioEra } from "./stdio_load.ts";
import { endAll } from "./process.ts";

interface Contender {
  label: string;
  args: string[];
  cpu: number[];
  rps: number[];
}

function option(name: string, fallback: string): string {
  const found = Deno.args.find((arg) => arg.startsWith(`--${name}=`));
  return found === undefined ? fallback : found.slice(name.length + 3);
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

async function contender(tree: string): Promise<Contender> {
  const root = await Deno.realPath(tree);
  return {
    label: tree,
    args: [
      "run",
      "-A",
      "--config",
      `${root}/deno.json`,
      `${root}/cli/main.ts`,
      "serve",
      `${root}/bench/servers/echo_server.ts`,
    ],
    cpu: [],
    rps: [],
  };
}

async function compare(
  era: StdioEra,
  trees: string[],
  rounds: number,
  seconds: number,
  inFlight: number,
): Promise<void> {
  const contenders = await Promise.all(trees.map(contender));
  const shape = { connections: inFlight, seconds, warmupSeconds: 0.5 };
  for (let round = 0; round < rounds; round++) {
    // Each round starts one tree later, so no tree always follows the same one.
    const start = round % contenders.length;
    const order = [...contenders.slice(start), ...contenders.slice(0, start)];
    for (const each of order) {
      const measured = await loadStdio(each.args, shape, era);
      if (measured.requests === 0 || measured.cpuUsPerRequest === undefined) {
        throw new Error(`${each.label} answered nothing`);
      }
      if (measured.errors > 0) throw new Error(`${each.label}: ${measured.errors} errors`);
      each.cpu.push(measured.cpuUsPerRequest);
      each.rps.push(measured.rps);
    }
  }
  const baseline = median(contenders[0].cpu);
  console.log(
    `stdio ${era}: ${rounds} rounds of ${seconds} s, ${inFlight} in flight, servers in turn; ` +
      "per request",
  );
  for (const { label, cpu, rps } of contenders) {
    const ratio = (median(cpu) / baseline).toFixed(3);
    console.log(
      `${label}  req/s median ${median(rps).toFixed(0)}  CPU µs median ${median(cpu).toFixed(2)} ` +
        `spread ${Math.min(...cpu).toFixed(2)}–${Math.max(...cpu).toFixed(2)}  ` +
        `(${ratio}× the first)  [${cpu.map((c) => c.toFixed(1)).join(" ")}]`,
    );
  }
}

async function main(): Promise<void> {
  const era = option("era", "both");
  if (!["stateless", "legacy", "both"].includes(era)) throw new Error(`unknown era ${era}`);
  const rounds = Number(option("rounds", "8"));
  const seconds = Number(option("seconds", "1.5"));
  const inFlight = Number(option("in-flight", "32"));
  const trees = Deno.args.filter((arg) => !arg.startsWith("--"));
  if (trees.length === 0) throw new Error("name at least one tree (a checkout of this repository)");
  const eras: StdioEra[] = era === "both" ? ["stateless", "legacy"] : [era as StdioEra];
  try {
    for (const each of eras) await compare(each, trees, rounds, seconds, inFlight);
  } finally {
    await endAll();
  }
  console.log(`/proc/loadavg at the end: ${(await Deno.readTextFile("/proc/loadavg")).trim()}`);
}

if (import.meta.main) await main();
