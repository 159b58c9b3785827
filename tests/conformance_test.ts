/**
 * The official MCP conformance suite against `cli serve examples/everything.ts
 * --http`: every scored scenario of the 2025-11-25 and 2026-07-28 requirement
 * sets must pass, and no scenario (scored or not) may send a message that
 * fails `wire-schema-valid`. Results land in `conformance-results/anubis/`.
 * See `tests/conformance/run.ts`.
 */

import assert from "node:assert/strict";
import { runConformance } from "./conformance/run.ts";

Deno.test({
  name: "conformance: every scored scenario of 2025-11-25 and 2026-07-28 passes",
  async fn() {
    const report = await runConformance();
    // The table; every failure and warning (the unscored ones too) is in summary.md.
    console.log(report.summary.split("\nFailures and warnings:")[0]);
    console.log(`details: ${report.outDir}summary.md`);
    const lines = [
      ...report.problems.map((p) => `${p.revision} ${p.scenario} ${p.check}: ${p.message}`),
      ...report.stale.map((e) =>
        `${e.revision} ${e.scenario} ${e.check}: passes now, remove it from expected_failures.ts`
      ),
    ];
    assert.deepEqual(lines, [], `conformance problems (details in ${report.outDir}):`);
  },
});
