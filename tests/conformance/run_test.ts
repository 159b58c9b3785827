/**
 * How the conformance harness reads the suite's output and decides what fails.
 */

import assert from "node:assert/strict";
import { judge, parseNotScored, type RevisionResult } from "./run.ts";

const STDOUT = `
=== SUMMARY ===
✓ tools-list: 3 passed, 0 failed
✗ tasks-lifecycle: 1 passed, 8 failed

Not scored for 2026-07-28: 2 scenario(s) run, 1 failing. These do not affect conformance.
  ✗ tasks-lifecycle (extension)
  ✓ json-schema-2020-12 (pending)
`;

function run(scenarios: RevisionResult["scenarios"], exitCode = 0): RevisionResult {
  return { revision: "2026-07-28", exitCode, durationMs: 1, timedOut: false, scenarios };
}

Deno.test("parseNotScored reads the not-scored block with its reasons", () => {
  assert.deepEqual(
    [...parseNotScored(STDOUT)],
    [["tasks-lifecycle", "extension"], ["json-schema-2020-12", "pending"]],
  );
  assert.equal(parseNotScored("no block").size, 0);
});

Deno.test("judge fails scored failures and wire-schema failures anywhere, nothing else", () => {
  const { problems } = judge([
    run([
      {
        scenario: "tools-list",
        scored: true,
        passed: false,
        checks: [{ id: "tools-list", status: "FAILURE", message: "no tools" }],
      },
      {
        scenario: "tasks-lifecycle",
        scored: false,
        notScoredReason: "extension",
        passed: false,
        checks: [
          { id: "tasks-sync-tool-call", status: "FAILURE" },
          { id: "wire-schema-valid", status: "FAILURE", message: "bad" },
        ],
      },
      {
        scenario: "caching",
        scored: true,
        passed: true,
        checks: [{ id: "caching-ttl", status: "WARNING" }],
      },
    ], 1),
  ], []);
  assert.deepEqual(problems.map((p) => `${p.scenario} ${p.check}`), [
    "tools-list tools-list",
    "tasks-lifecycle wire-schema-valid",
  ]);
});

Deno.test("judge honours the baseline and reports its stale entries", () => {
  const baseline = [
    { revision: "2026-07-28", scenario: "caching", check: "caching-ttl", reason: "suite bug" },
    { revision: "2026-07-28", scenario: "ping", check: "ping", reason: "suite bug" },
    { revision: "2025-11-25", scenario: "ping", check: "ping", reason: "other set" },
  ];
  const { problems, stale } = judge([
    run([{
      scenario: "caching",
      scored: true,
      passed: false,
      checks: [{ id: "caching-ttl", status: "FAILURE" }],
    }], 1),
  ], baseline);
  assert.deepEqual(problems, []);
  assert.deepEqual(stale, [baseline[1]]);
});

Deno.test("judge fails a run that was killed or ran nothing", () => {
  const killed = { ...run([]), timedOut: true, exitCode: 143 };
  assert.deepEqual(
    judge([killed], []).problems.map((p) => p.message.split(" ").slice(0, 4).join(" ")),
    ["the suite was killed", "the suite ran no"],
  );
});
