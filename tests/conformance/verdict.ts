/**
 * What the conformance gate makes of the suite's results: which FAILUREs and
 * WARNINGs fail it and which `expected_failures.ts` allows (with why), and
 * the summary that says so.
 *
 * @module
 */

import {
  CLAIMED,
  type Claimed,
  EXPECTED_FAILURES,
  type ExpectedFailure,
  NOT_IMPLEMENTED,
  type NotImplemented,
} from "./expected_failures.ts";

/** One check as the suite reports it. */
export interface CheckResult {
  /** The check id, e.g. `wire-schema-valid`. */
  id: string;
  /** `SUCCESS`, `FAILURE`, `WARNING`, `INFO` or `SKIPPED`. */
  status: string;
  /** The suite's error message, for failures and warnings. */
  message?: string;
}

/** One scenario of one requirement-set run. */
export interface ScenarioResult {
  /** The scenario name. */
  scenario: string;
  /** Whether the requirement set scores it (the rest run for visibility). */
  scored: boolean;
  /** Why it is not scored (`pending`, `extension`, ...). */
  notScoredReason?: string;
  /** True when no check failed. */
  passed: boolean;
  /** Every check. */
  checks: CheckResult[];
}

/** One run of the suite with `--requirements <revision>`. */
export interface RevisionResult {
  /** The requirement set. */
  revision: string;
  /** The suite's exit code (non-zero iff a scored scenario failed). */
  exitCode: number;
  /** Wall time of the run. */
  durationMs: number;
  /** True when the run was killed for taking longer than allowed. */
  timedOut: boolean;
  /** Every scenario the suite ran. */
  scenarios: ScenarioResult[];
}

/** A failure or warning that makes the run fail, with where it came from. */
export interface Problem {
  /** The requirement set. */
  revision: string;
  /** The scenario (or `-` for a problem with the run itself). */
  scenario: string;
  /** The check id (or `-` for a problem with the run or the scenario itself). */
  check: string;
  /** `FAILURE`, `WARNING`, or `SKIPPED` in a claimed scenario (or `-`, as for `check`). */
  status: string;
  /** What went wrong. */
  message: string;
}

/** A failure (or warning) the gate allows, and which list allows it, why. */
export interface Baselined {
  /** The requirement set. */
  revision: string;
  /** The scenario. */
  scenario: string;
  /** The check id. */
  check: string;
  /** `FAILURE` or `WARNING`. */
  status: string;
  /** `suite bug` (`EXPECTED_FAILURES`) or `not implemented` (`NOT_IMPLEMENTED`). */
  kind: "suite bug" | "not implemented";
  /** The entry's reason. */
  reason: string;
}

/** What {@linkcode judge} makes of a set of runs. */
export interface Verdict {
  /** What fails the gate. */
  problems: Problem[];
  /** What the gate allows, with the reason. */
  baselined: Baselined[];
  /** `EXPECTED_FAILURES` entries whose check no longer fails. */
  stale: ExpectedFailure[];
  /** `NOT_IMPLEMENTED` entries whose scenario ran with no failure to allow, or did not run. */
  staleNotImplemented: NotImplemented[];
}

/**
 * The verdict on a set of runs. Every FAILURE and every WARNING, in any
 * scenario, scored or not, is a problem unless `baseline` lists the check (a
 * suite bug) or, for a FAILURE other than `wire-schema-valid`,
 * `notImplemented` lists its unscored scenario. A run that ended abnormally is
 * a problem, and so is a listed scenario that its requirement set scores.
 * In a scenario `claimed` lists, a SKIPPED check is a problem too, and so is
 * the scenario not running (when only some scenarios run, `claimed` should
 * name those). Entries that allowed nothing in a requirement set that ran are
 * stale.
 */
export function judge(
  revisions: readonly RevisionResult[],
  baseline: readonly ExpectedFailure[] = EXPECTED_FAILURES,
  notImplemented: readonly NotImplemented[] = NOT_IMPLEMENTED,
  claimed: readonly Claimed[] = CLAIMED,
): Verdict {
  const problems: Problem[] = [];
  const baselined: Baselined[] = [];
  const used = new Set<ExpectedFailure | NotImplemented>();
  const runProblem = (revision: string, message: string) =>
    problems.push({ revision, scenario: "-", check: "-", status: "-", message });
  for (const run of revisions) {
    const scoredFailure = run.scenarios.some((s) =>
      s.scored && s.checks.some((c) => c.status === "FAILURE")
    );
    if (run.timedOut) {
      runProblem(run.revision, `the suite was killed after ${Math.round(run.durationMs / 1000)} s`);
    } else if (run.exitCode !== 0 && !scoredFailure) {
      runProblem(
        run.revision,
        `the suite exited with ${run.exitCode} and reported no scored failure`,
      );
    }
    if (run.scenarios.length === 0) runProblem(run.revision, "the suite ran no scenario");
    for (const c of claimed) {
      if (c.revision === run.revision && !run.scenarios.some((s) => s.scenario === c.scenario)) {
        problems.push({
          revision: run.revision,
          scenario: c.scenario,
          check: "-",
          status: "-",
          message: `claimed (${c.reason}), but the suite did not run it`,
        });
      }
    }
    for (const s of run.scenarios) {
      const claim = claimed.find((e) => e.revision === run.revision && e.scenario === s.scenario);
      for (const c of claim ? s.checks : []) {
        if (c.status !== "SKIPPED") continue;
        problems.push({
          revision: run.revision,
          scenario: s.scenario,
          check: c.id,
          status: c.status,
          message: `skipped in a claimed scenario (${claim!.reason}): ${c.message ?? ""}`,
        });
      }
      const missing = notImplemented.find((e) =>
        e.revision === run.revision && e.scenario === s.scenario
      );
      if (missing && s.scored) {
        problems.push({
          revision: run.revision,
          scenario: s.scenario,
          check: "-",
          status: "-",
          message: "listed in NOT_IMPLEMENTED, but the requirement set scores it: it must pass",
        });
      }
      for (const c of s.checks) {
        if (c.status !== "FAILURE" && c.status !== "WARNING") continue;
        const where = {
          revision: run.revision,
          scenario: s.scenario,
          check: c.id,
          status: c.status,
        };
        const bug = baseline.find((e) =>
          e.revision === run.revision && e.scenario === s.scenario && e.check === c.id
        );
        if (bug) {
          used.add(bug);
          baselined.push({ ...where, kind: "suite bug", reason: bug.reason });
        } else if (
          missing && !s.scored && c.status === "FAILURE" && c.id !== "wire-schema-valid"
        ) {
          used.add(missing);
          baselined.push({ ...where, kind: "not implemented", reason: missing.reason });
        } else {
          problems.push({ ...where, message: c.message ?? "" });
        }
      }
    }
  }
  const ran = new Set(revisions.map((r) => r.revision));
  const isStale = (e: ExpectedFailure | NotImplemented) => ran.has(e.revision) && !used.has(e);
  return {
    problems,
    baselined,
    stale: baseline.filter(isStale),
    staleNotImplemented: notImplemented.filter(isStale),
  };
}

function count(scenarios: readonly ScenarioResult[]) {
  const checks = scenarios.flatMap((s) => s.checks);
  return {
    scenarios: `${scenarios.filter((s) => s.passed).length}/${scenarios.length}`,
    passed: checks.filter((c) => c.status === "SUCCESS").length,
    warnings: checks.filter((c) => c.status === "WARNING").length,
    failures: checks.filter((c) => c.status === "FAILURE").length,
    other: checks.filter((c) => !["SUCCESS", "WARNING", "FAILURE"].includes(c.status)).length,
  };
}

const oneLine = (text: string) => text.replaceAll("\n", " ").slice(0, 400);
const plural = (n: number, noun: string) =>
  `${n} ${n === 1 ? noun : noun.endsWith("y") ? `${noun.slice(0, -1)}ies` : `${noun}s`}`;

/**
 * The summary under `title`: the gate's verdict, the table, what is baselined and why, what
 * fails the gate, then every failure and warning tagged with which of those
 * it is.
 */
export function summarize(
  title: string,
  revisions: readonly RevisionResult[],
  verdict: Verdict,
): string {
  const { problems, baselined, stale, staleNotImplemented } = verdict;
  const failing = problems.length + stale.length + staleNotImplemented.length;
  const missingScenarios = new Map<string, { count: number; reason: string }>();
  for (const b of baselined.filter((b) => b.kind === "not implemented")) {
    const key = `${b.revision} ${b.scenario}`;
    const entry = missingScenarios.get(key) ?? { count: 0, reason: b.reason };
    entry.count++;
    missingScenarios.set(key, entry);
  }
  const bugs = baselined.filter((b) => b.kind === "suite bug");
  const lines = [
    title,
    "",
    `Gate: ${failing === 0 ? "passed" : "FAILED"} (${plural(problems.length, "problem")}, ` +
    `${plural(stale.length + staleNotImplemented.length, "stale baseline entry")}; allowed: ` +
    `${plural(baselined.length - bugs.length, "failure")} in ` +
    `${plural(missingScenarios.size, "scenario")} not implemented, ` +
    `${plural(bugs.length, "suite bug")}). Every FAILURE and WARNING fails it unless ` +
    "tests/conformance/expected_failures.ts allows it.",
    "",
    "| requirement set | scenarios | scenarios passed | checks passed | warnings | failures | info/skipped | time |",
    "| --- | --- | --- | --- | --- | --- | --- | --- |",
  ];
  for (const run of revisions) {
    for (
      const [kind, list] of [
        ["scored", run.scenarios.filter((s) => s.scored)],
        ["not scored", run.scenarios.filter((s) => !s.scored)],
      ] as const
    ) {
      const c = count(list);
      const time = kind === "scored" ? `${(run.durationMs / 1000).toFixed(1)} s` : "";
      lines.push(
        `| ${run.revision} | ${kind} | ${c.scenarios} | ${c.passed} | ${c.warnings} | ${c.failures} | ${c.other} | ${time} |`,
      );
    }
  }
  if (missingScenarios.size > 0) {
    lines.push("", "Not implemented (NOT_IMPLEMENTED: their failures are allowed):", "");
    for (const [scenario, { count, reason }] of missingScenarios) {
      lines.push(`- ${scenario}: ${plural(count, "failure")} allowed: ${reason}`);
    }
  }
  if (bugs.length > 0) {
    lines.push("", "Suite bugs (EXPECTED_FAILURES: these checks are allowed):", "");
    for (const b of bugs) lines.push(`- ${b.revision} ${b.scenario} ${b.check}: ${b.reason}`);
  }
  if (failing > 0) {
    lines.push("", "Fails the gate:", "");
    for (const p of problems) {
      lines.push(`- ${p.revision} ${p.scenario} ${p.check} ${p.status}: ${oneLine(p.message)}`);
    }
    for (const e of stale) {
      lines.push(
        `- stale: ${e.revision} ${e.scenario} ${e.check} passes now: remove it from EXPECTED_FAILURES`,
      );
    }
    for (const e of staleNotImplemented) {
      lines.push(
        `- stale: ${e.revision} ${e.scenario} has no failure to allow (it passes, or no longer runs): remove it from NOT_IMPLEMENTED`,
      );
    }
  }
  const tag = (revision: string, scenario: string, check: string, status: string) => {
    const b = baselined.find((b) =>
      b.revision === revision && b.scenario === scenario && b.check === check &&
      b.status === status
    );
    return b ? b.kind : "problem";
  };
  const notPassing = revisions.flatMap((run) =>
    run.scenarios.flatMap((s) =>
      s.checks
        .filter((c) => c.status === "FAILURE" || c.status === "WARNING")
        .map((c) =>
          `- [${tag(run.revision, s.scenario, c.id, c.status)}] ${run.revision} ${s.scenario}` +
          (s.scored ? "" : ` (not scored: ${s.notScoredReason})`) +
          ` ${c.id} ${c.status}: ${oneLine(c.message ?? "")}`
        )
    )
  );
  // A scenario can pass without testing anything (every check INFO or
  // SKIPPED, e.g. a tool it needs answered an error): say so.
  const vacuous = revisions.flatMap((run) =>
    run.scenarios
      .filter((s) => s.checks.every((c) => c.status === "INFO" || c.status === "SKIPPED"))
      .map((s) => `${run.revision} ${s.scenario}`)
  );
  if (vacuous.length > 0) lines.push("", `Passed without a decisive check: ${vacuous.join(", ")}`);
  if (notPassing.length > 0) lines.push("", "Failures and warnings:", "", ...notPassing);
  return lines.join("\n") + "\n";
}
