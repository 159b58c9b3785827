/**
 * Runs the official MCP conformance suite
 * (`npm:@modelcontextprotocol/conformance`, server mode) against an MCP server
 * over Streamable HTTP, once per requirement set, and reports per scenario and
 * per check.
 *
 * The suite needs Node 22 APIs (`fs.globSync`), so it runs under the same Deno
 * that runs the tests, straight from its `npm:` specifier. Its whole npm graph
 * is pinned by `conformance.lock` beside this file (`--frozen`), and Deno
 * fetches it from the npm registry on first use, so a fresh machine needs
 * nothing installed beforehand.
 *
 * As a script:
 *
 * ```sh
 * # start `cli serve examples/everything.ts --http` and test it
 * deno run -A tests/conformance/run.ts
 * # test a server that is already running
 * deno run -A tests/conformance/run.ts --url http://127.0.0.1:3000/mcp --label other
 * # only some scenarios, at the 2026-07-28 wire
 * deno run -A tests/conformance/run.ts --requirements 2026-07-28 \
 *   --scenarios sep-2640-skills-enumeration,sep-2640-skills-manifest
 * ```
 *
 * Results go to `conformance-results/<label>/<time>-<random>/` (the newest
 * five runs are kept): `results.json` (everything),
 * `checks.tsv` (revision, scenario, check, status, message), `summary.md` and
 * the suite's own per-scenario `checks.json` files under `raw/<revision>/`.
 * What fails the run is decided in `verdict.ts`, from the exceptions listed
 * with their reasons in `expected_failures.ts`.
 *
 * @module
 */

import {
  CLAIMED,
  EXPECTED_FAILURES,
  type ExpectedFailure,
  NOT_IMPLEMENTED,
  type NotImplemented,
} from "./expected_failures.ts";
import {
  type Baselined,
  judge,
  type Problem,
  type RevisionResult,
  type ScenarioResult,
  summarize,
} from "./verdict.ts";

/** The pinned suite. */
export const SUITE = "npm:@modelcontextprotocol/conformance@0.2.0-alpha.12";
/** The requirement sets we must pass, each run at its own wire version. */
export const REVISIONS = ["2025-11-25", "2026-07-28"] as const;

const ROOT = new URL("../../", import.meta.url);
const LOCK = new URL("./conformance.lock", import.meta.url);

/** The outcome of {@linkcode runConformance}. */
export interface ConformanceReport {
  /** The label the results were written under. */
  label: string;
  /** The endpoint tested. */
  url: string;
  /** One entry per requirement set. */
  revisions: RevisionResult[];
  /** Every FAILURE and WARNING the baselines do not allow, and runs that ended abnormally. */
  problems: Problem[];
  /** The failures the baselines allow, with their reasons. */
  baselined: Baselined[];
  /** `EXPECTED_FAILURES` entries that no longer fail. */
  stale: ExpectedFailure[];
  /** `NOT_IMPLEMENTED` entries whose scenario no longer fails (or no longer runs). */
  staleNotImplemented: NotImplemented[];
  /** The verdict, the summary table and every failure and warning, as Markdown. */
  summary: string;
  /** Where the results were written. */
  outDir: string;
}

/** Options of {@linkcode runConformance}. */
export interface RunOptions {
  /** Test this endpoint; without it, `cli serve` is started on {@linkcode module}. */
  url?: string;
  /** The server module for `cli serve` (default `examples/everything.ts`). */
  module?: string;
  /** Results go to `conformance-results/<label>/<run>/` (default `anubis`). */
  label?: string;
  /** Which requirement sets to run (default both). */
  revisions?: readonly string[];
  /**
   * Run only these scenarios, each at the wire of every requirement set
   * (`--scenario S --spec-version R --force`), instead of all the set
   * requires. They count as scored.
   */
  scenarios?: readonly string[];
  /** The suite's per-scenario timeout (default 15 s). */
  scenarioTimeoutMs?: number;
  /** Kill one requirement-set run after this long (default 3 min). */
  runTimeoutMs?: number;
  /** Echo the suite's output as it runs. */
  verbose?: boolean;
}

/** Starts `cli serve <module> --http --port 0` and resolves its URL. */
export async function startServer(
  module: string,
  logFile: string,
): Promise<{ url: string; stop: () => Promise<void> }> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "cli/main.ts",
      "serve",
      module,
      "--http",
      "--host",
      "127.0.0.1",
      "--port",
      "0",
      "--event-store",
      "memory",
    ],
    cwd: ROOT,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const log = await Deno.open(logFile, { write: true, create: true, truncate: true });
  const encoder = new TextEncoder();
  let resolveUrl: (url: string) => void;
  const urlFound = new Promise<string>((resolve) => resolveUrl = resolve);
  const pump = async (stream: ReadableStream<Uint8Array>, scan: boolean) => {
    let buffer = "";
    for await (const text of stream.pipeThrough(new TextDecoderStream())) {
      await log.write(encoder.encode(text));
      if (!scan) continue;
      buffer += text;
      const match = buffer.match(/listening on (https?:\/\/\S+)/);
      if (match) {
        resolveUrl(match[1]);
        scan = false;
        buffer = "";
      }
    }
  };
  const pumping = Promise.all([pump(child.stdout, false), pump(child.stderr, true)]);
  const stop = async () => {
    try {
      child.kill("SIGTERM");
    } catch { /* already gone */ }
    const killer = setTimeout(() => {
      try {
        child.kill("SIGKILL");
      } catch { /* already gone */ }
    }, 5_000);
    await child.status;
    clearTimeout(killer);
    await pumping;
    log.close();
  };
  const exited = child.status.then((s) => `the server exited with code ${s.code}`);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<string>((r) => timer = setTimeout(() => r("no URL in 60 s"), 60_000));
  const first = await Promise.race([urlFound, exited, timeout]);
  clearTimeout(timer);
  if (!/^https?:/.test(first)) {
    await stop();
    const output = await Deno.readTextFile(logFile);
    throw new Error(`cli serve did not print its URL (${first}):\n${output}`);
  }
  return { url: first, stop };
}

/** Runs the suite for one requirement set and collects its results. */
async function runRevision(
  url: string,
  revision: string,
  rawDir: string,
  suiteDir: string,
  options:
    & Required<Pick<RunOptions, "scenarioTimeoutMs" | "runTimeoutMs" | "verbose">>
    & Pick<RunOptions, "scenarios">
    & { claimed: readonly string[] },
): Promise<RevisionResult> {
  await Deno.mkdir(rawDir, { recursive: true });
  const started = performance.now();
  const deadline = AbortSignal.timeout(options.runTimeoutMs);
  const one = (s: string) => ["--scenario", s, "--spec-version", revision, "--force"];
  let stdout = "";
  let stderr = "";
  let exitCode = 0;
  // An unscored run's exit code says nothing its checks do not.
  const run = async (selection: string[], scored = true) => {
    if (deadline.aborted) return;
    const ran = await runSuite(
      url,
      selection,
      rawDir,
      suiteDir,
      options.scenarioTimeoutMs,
      deadline,
    );
    stdout += ran.stdout;
    stderr += ran.stderr;
    if (scored) exitCode = Math.max(exitCode, ran.code);
  };
  // Claimed scenarios the requirement set does not name run after it, unscored.
  const extra = new Map<string, string>();
  if (options.scenarios) {
    for (const scenario of options.scenarios) await run(one(scenario));
  } else {
    await run(["--requirements", revision]);
    const ran = new Set((await scenarioDirs(rawDir)).map(([, scenario]) => scenario));
    for (const scenario of options.claimed.filter((s) => !ran.has(s))) {
      extra.set(scenario, "claimed, not in the requirement set");
      await run(one(scenario), false);
    }
  }
  await Deno.writeTextFile(`${rawDir}/stdout.txt`, stdout);
  await Deno.writeTextFile(`${rawDir}/stderr.txt`, stderr);
  if (options.verbose) console.log(stdout);
  const notScored = new Map([...parseNotScored(stdout), ...extra]);
  const scenarios: ScenarioResult[] = [];
  for (const [dir, scenario] of await scenarioDirs(rawDir)) {
    let raw: { id: string; status: string; errorMessage?: string }[];
    try {
      raw = JSON.parse(await Deno.readTextFile(`${rawDir}/${dir}/checks.json`));
    } catch {
      raw = [{ id: scenario, status: "FAILURE", errorMessage: "no checks.json was written" }];
    }
    const checks = raw.map((c) => ({
      id: c.id,
      status: c.status,
      ...(c.errorMessage ? { message: c.errorMessage } : {}),
    }));
    const reason = notScored.get(scenario);
    scenarios.push({
      scenario,
      scored: reason === undefined,
      ...(reason === undefined ? {} : { notScoredReason: reason }),
      passed: !checks.some((c) => c.status === "FAILURE"),
      checks,
    });
  }
  // The suite reports a scenario that crashed outside its own runner only in
  // its summary; make every "✗ name" of the summary show up.
  for (const [scenario, failed] of parseSummary(stdout)) {
    if (failed && !scenarios.some((s) => s.scenario === scenario)) {
      const reason = notScored.get(scenario);
      scenarios.push({
        scenario,
        scored: reason === undefined,
        ...(reason === undefined ? {} : { notScoredReason: reason }),
        passed: false,
        checks: [{ id: scenario, status: "FAILURE", message: "scenario failed to run" }],
      });
    }
  }
  scenarios.sort((a, b) => a.scenario.localeCompare(b.scenario));
  return {
    revision,
    exitCode,
    durationMs: Math.round(performance.now() - started),
    timedOut: deadline.aborted,
    scenarios,
  };
}

/** The suite's per-scenario result folders in `rawDir`: [folder, scenario]. */
async function scenarioDirs(rawDir: string): Promise<[string, string][]> {
  const found: [string, string][] = [];
  for await (const entry of Deno.readDir(rawDir)) {
    const match = entry.name.match(/^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/);
    if (entry.isDirectory && match) found.push([entry.name, match[1]]);
  }
  return found;
}

/** One run of the suite with `selection` (`--requirements R`, or one `--scenario`). */
async function runSuite(
  url: string,
  selection: string[],
  rawDir: string,
  suiteDir: string,
  scenarioTimeoutMs: number,
  deadline: AbortSignal,
): Promise<{ stdout: string; stderr: string; code: number }> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--no-config",
      `--lock=${LOCK.pathname}`,
      "--frozen",
      // A local node_modules in the run's own folder, not the global cache:
      // Deno 2.9.6 can hang for good on the suite's first start from the
      // global cache (require(esm) of async-generator-function, reached from
      // get-intrinsic, waits on a futex), when the cache was just filled by
      // another project and holds no analysis of those files yet.
      "--node-modules-dir=auto",
      SUITE,
      "server",
      "--url",
      url,
      ...selection,
      "--timeout",
      String(scenarioTimeoutMs),
      "-o",
      rawDir,
    ],
    cwd: suiteDir,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
    signal: deadline,
  }).spawn();
  const [stdout, stderr, status] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.status,
  ]);
  return { stdout, stderr, code: status.code };
}

/** Reads the "Not scored for R: ..." block of the suite's output. */
export function parseNotScored(stdout: string): Map<string, string> {
  const result = new Map<string, string>();
  const block = stdout.split(/^Not scored for /m)[1];
  if (!block) return result;
  for (const line of block.split("\n").slice(1)) {
    const match = line.match(/^\s+[✓✗]\s+(\S+)\s+\(([^)]*)\)/);
    if (!match) break;
    result.set(match[1], match[2]);
  }
  return result;
}

/** Reads the "=== SUMMARY ===" lines: scenario name to "has a failure". */
function parseSummary(stdout: string): Map<string, boolean> {
  const result = new Map<string, boolean>();
  const block = stdout.split("=== SUMMARY ===")[1] ?? "";
  for (const line of block.split("\n")) {
    const match = line.match(/^([✓✗]) (\S+): \d+ passed, \d+ failed/);
    if (match) result.set(match[2], match[1] === "✗");
  }
  return result;
}

/**
 * Runs every requirement set against one server and writes the results to
 * `conformance-results/<label>/`.
 */
export async function runConformance(options: RunOptions = {}): Promise<ConformanceReport> {
  const label = options.label ?? "anubis";
  // One folder per run: engineers sharing a working tree may run it at once.
  const labelDir = new URL(`conformance-results/${label}/`, ROOT).pathname;
  await Deno.mkdir(labelDir, { recursive: true });
  await pruneRuns(labelDir, 4);
  const stamp = new Date().toISOString().replaceAll(":", "-").replace(/\..*$/, "");
  const outDir = await Deno.makeTempDir({ dir: labelDir, prefix: `${stamp}-` }) + "/";
  const server = options.url
    ? { url: options.url, stop: () => Promise.resolve() }
    : await startServer(options.module ?? "examples/everything.ts", `${outDir}server.log`);
  const revisions: RevisionResult[] = [];
  const suiteDir = `${outDir}suite`;
  await Deno.mkdir(suiteDir, { recursive: true });
  try {
    for (const revision of options.revisions ?? REVISIONS) {
      revisions.push(
        await runRevision(server.url, revision, `${outDir}raw/${revision}`, suiteDir, {
          scenarioTimeoutMs: options.scenarioTimeoutMs ?? 15_000,
          runTimeoutMs: options.runTimeoutMs ?? 3 * 60_000,
          verbose: options.verbose ?? false,
          scenarios: options.scenarios,
          claimed: CLAIMED.filter((c) => c.revision === revision).map((c) => c.scenario),
        }),
      );
    }
  } finally {
    await server.stop();
  }
  // A run of some scenarios is judged by the entries about them.
  const only = options.scenarios;
  const about = <T extends { scenario: string }>(list: readonly T[]) =>
    only ? list.filter((e) => only.includes(e.scenario)) : list;
  const verdict = judge(
    revisions,
    about(EXPECTED_FAILURES),
    about(NOT_IMPLEMENTED),
    about(CLAIMED),
  );
  const summary = summarize(`Conformance (${SUITE.slice(4)}) against ${label}`, revisions, verdict);
  const tsv = revisions.flatMap((run) =>
    run.scenarios.flatMap((s) =>
      s.checks.map((c) =>
        [
          run.revision,
          s.scenario,
          s.scored ? "scored" : "not-scored",
          c.id,
          c.status,
          c.message ?? "",
        ]
          .map((field) => field.replaceAll(/[\t\n]/g, " "))
          .join("\t")
      )
    )
  );
  await Deno.writeTextFile(
    `${outDir}checks.tsv`,
    ["revision\tscenario\tscored\tcheck\tstatus\tmessage", ...tsv].join("\n") + "\n",
  );
  await Deno.writeTextFile(`${outDir}summary.md`, summary);
  await Deno.writeTextFile(
    `${outDir}results.json`,
    JSON.stringify({ label, url: server.url, suite: SUITE, revisions, ...verdict }, null, 2),
  );
  return { label, url: server.url, revisions, ...verdict, summary, outDir };
}

/** Keeps the newest `keep` run folders of a label. */
async function pruneRuns(labelDir: string, keep: number): Promise<void> {
  const runs: string[] = [];
  for await (const entry of Deno.readDir(labelDir)) {
    if (entry.isDirectory && /^\d{4}-\d{2}-\d{2}T/.test(entry.name)) runs.push(entry.name);
  }
  for (const name of runs.sort().slice(0, Math.max(0, runs.length - keep))) {
    await Deno.remove(`${labelDir}${name}`, { recursive: true }).catch(() => {});
  }
}

function flag(args: string[], name: string): string | undefined {
  const at = args.indexOf(name);
  return at === -1 ? undefined : args[at + 1];
}

if (import.meta.main) {
  const args = Deno.args;
  const report = await runConformance({
    url: flag(args, "--url"),
    module: flag(args, "--module"),
    label: flag(args, "--label"),
    revisions: flag(args, "--requirements")?.split(","),
    scenarios: flag(args, "--scenarios")?.split(","),
    verbose: args.includes("--verbose"),
  });
  console.log(report.summary);
  console.log(`results: ${report.outDir}`);
  const failing = report.problems.length + report.stale.length + report.staleNotImplemented.length;
  Deno.exit(failing > 0 ? 1 : 0);
}
