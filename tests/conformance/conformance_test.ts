/**
 * The official MCP conformance suite against `cli serve examples/everything.ts
 * --http`, for the 2025-11-25 and 2026-07-28 requirement sets: no scenario,
 * scored or not, may report a FAILURE or a WARNING, except what
 * `tests/conformance/expected_failures.ts` allows with a reason (suite bugs;
 * failures of unscored scenarios of features not implemented, never their
 * `wire-schema-valid`), and no entry there may be stale. Results land in
 * `conformance-results/anubis/`. See `tests/conformance/run.ts`.
 */

import assert from "node:assert/strict";
import { runConformance } from "./run.ts";

Deno.test({
  name: "conformance: 2025-11-25 and 2026-07-28 have no failure or warning but the baselined ones",
  async fn() {
    const report = await runConformance();
    // The verdict, the table and what is baselined; every failure and warning is in summary.md.
    console.log(report.summary.split("\nFailures and warnings:")[0]);
    console.log(`details: ${report.outDir}summary.md`);
    const lines = [
      ...report.problems.map((p) =>
        `${p.revision} ${p.scenario} ${p.check} ${p.status}: ${p.message}`
      ),
      ...report.stale.map((e) =>
        `${e.revision} ${e.scenario} ${e.check}: passes now, remove it from EXPECTED_FAILURES`
      ),
      ...report.staleNotImplemented.map((e) =>
        `${e.revision} ${e.scenario}: no failure to allow, remove it from NOT_IMPLEMENTED`
      ),
    ];
    assert.deepEqual(lines, [], `conformance problems (details in ${report.outDir}):`);
  },
});

/** The SEP-2640 scenarios the everything server claims at 2026-07-28. */
const SKILLS_SCENARIOS = [
  "sep-2640-skills-enumeration",
  "sep-2640-skills-manifest",
  "sep-2640-skills-directory",
];

Deno.test({
  name: "conformance: the skills scenarios (SEP-2640) at 2026-07-28 pass every check, none skipped",
  async fn() {
    const report = await runConformance({
      label: "anubis-skills",
      revisions: ["2026-07-28"],
      scenarios: SKILLS_SCENARIOS,
    });
    const [run] = report.revisions;
    assert.deepEqual(run.scenarios.map((s) => s.scenario).sort(), [...SKILLS_SCENARIOS].sort());
    const notPassing = run.scenarios.flatMap((s) =>
      s.checks.filter((c) => c.status !== "SUCCESS").map((c) =>
        `${s.scenario} ${c.id} ${c.status}: ${c.message ?? ""}`
      )
    );
    assert.deepEqual(notPassing, [], `details in ${report.outDir}summary.md`);
    // 32 + 6 + 7 checks with wire-schema-valid: each scenario decides something.
    for (const s of run.scenarios) assert.ok(s.checks.length > 5, s.scenario);
    assert.deepEqual(report.problems, []);
  },
});
