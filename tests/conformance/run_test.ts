/**
 * How the conformance harness reads the suite's output and decides what fails.
 */

import assert from "node:assert/strict";
import type { NotImplemented } from "./expected_failures.ts";
import { parseNotScored } from "./run.ts";
import {
  type CheckResult,
  judge,
  type RevisionResult,
  type ScenarioResult,
  summarize,
} from "./verdict.ts";

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

Deno.test("judge fails every FAILURE and WARNING, scored or not", () => {
  const { problems } = judge(
    [
      run([
        {
          scenario: "tools-list",
          scored: true,
          passed: false,
          checks: [{ id: "tools-list", status: "FAILURE", message: "no tools" }],
        },
        {
          scenario: "json-schema-2020-12",
          scored: false,
          notScoredReason: "pending",
          passed: false,
          checks: [
            { id: "json-schema-2020-12-$defs", status: "FAILURE", message: "dropped" },
            { id: "wire-schema-valid", status: "SUCCESS" },
          ],
        },
        {
          scenario: "caching",
          scored: true,
          passed: true,
          checks: [{ id: "caching-ttl", status: "WARNING", message: "no ttl" }],
        },
        {
          scenario: "http-header-validation",
          scored: false,
          notScoredReason: "pending",
          passed: true,
          checks: [
            { id: "sep-2243-header-name-case-insensitive", status: "WARNING" },
            { id: "probe", status: "INFO" },
            { id: "other", status: "SKIPPED" },
          ],
        },
      ], 1),
    ],
    [],
    [],
    [],
  );
  assert.deepEqual(problems.map((p) => `${p.scenario} ${p.check} ${p.status}`), [
    "tools-list tools-list FAILURE",
    "json-schema-2020-12 json-schema-2020-12-$defs FAILURE",
    "caching caching-ttl WARNING",
    "http-header-validation sep-2243-header-name-case-insensitive WARNING",
  ]);
});

const TASKS: NotImplemented = {
  revision: "2026-07-28",
  scenario: "tasks-lifecycle",
  reason: "no tasks",
};

/** The `tasks-lifecycle` scenario with these checks, unscored as the suite runs it. */
function tasksLifecycle(checks: CheckResult[], scored = false): ScenarioResult {
  return {
    scenario: "tasks-lifecycle",
    scored,
    ...(scored ? {} : { notScoredReason: "extension" }),
    passed: !checks.some((c) => c.status === "FAILURE"),
    checks,
  };
}

/** What a server without tasks gets in `tasks-lifecycle`. */
const NO_TASKS: CheckResult[] = [
  { id: "tasks-sync-tool-call", status: "FAILURE", message: "Unknown tool: greet" },
  { id: "sep-2663-cancel-ack-empty-result", status: "FAILURE" },
];

Deno.test("judge allows the failures of a not-implemented scenario, not its wire-schema failures or warnings", () => {
  const { problems, baselined, staleNotImplemented } = judge(
    [
      run([tasksLifecycle([
        ...NO_TASKS,
        { id: "wire-schema-valid", status: "FAILURE", message: "bad" },
        { id: "tasks-hint", status: "WARNING" },
      ])]),
    ],
    [],
    [TASKS],
    [],
  );
  assert.deepEqual(problems.map((p) => `${p.check} ${p.status}`), [
    "wire-schema-valid FAILURE",
    "tasks-hint WARNING",
  ]);
  assert.deepEqual(baselined.map((b) => `${b.check} ${b.kind}: ${b.reason}`), [
    "tasks-sync-tool-call not implemented: no tasks",
    "sep-2663-cancel-ack-empty-result not implemented: no tasks",
  ]);
  assert.deepEqual(staleNotImplemented, []);
});

Deno.test("judge reports a not-implemented scenario that passes, or no longer runs, as stale", () => {
  const other = { ...TASKS, scenario: "tasks-wire-fields" };
  const elsewhere = { ...TASKS, revision: "2025-11-25" };
  const { problems, staleNotImplemented } = judge(
    [
      run([tasksLifecycle([{ id: "tasks-sync-tool-call", status: "SUCCESS" }])]),
    ],
    [],
    [TASKS, other, elsewhere],
    [],
  );
  assert.deepEqual(problems, []);
  assert.deepEqual(staleNotImplemented, [TASKS, other], "a set that did not run is not judged");
});

Deno.test("judge never lets a scored scenario off as not implemented", () => {
  const { problems, baselined } = judge(
    [
      run([tasksLifecycle(NO_TASKS, true)], 1),
    ],
    [],
    [TASKS],
    [],
  );
  assert.deepEqual(baselined, []);
  assert.deepEqual(problems.map((p) => `${p.check} ${p.status}`), [
    "- -",
    "tasks-sync-tool-call FAILURE",
    "sep-2663-cancel-ack-empty-result FAILURE",
  ]);
  assert.match(problems[0].message, /NOT_IMPLEMENTED, but the requirement set scores it/);
});

Deno.test("judge honours the baseline and reports its stale entries", () => {
  const baseline = [
    { revision: "2026-07-28", scenario: "caching", check: "caching-ttl", reason: "suite bug" },
    { revision: "2026-07-28", scenario: "ping", check: "ping", reason: "suite bug" },
    { revision: "2025-11-25", scenario: "ping", check: "ping", reason: "other set" },
  ];
  const { problems, stale, baselined } = judge(
    [
      run([{
        scenario: "caching",
        scored: true,
        passed: false,
        checks: [{ id: "caching-ttl", status: "FAILURE" }],
      }], 1),
    ],
    baseline,
    [],
    [],
  );
  assert.deepEqual(problems, []);
  assert.deepEqual(baselined.map((b) => `${b.check} ${b.kind}: ${b.reason}`), [
    "caching-ttl suite bug: suite bug",
  ]);
  assert.deepEqual(stale, [baseline[1]]);
});

Deno.test("judge fails a run that was killed or ran nothing", () => {
  const killed = { ...run([]), timedOut: true, exitCode: 143 };
  assert.deepEqual(
    judge([killed], [], [], []).problems.map((p) => p.message.split(" ").slice(0, 4).join(" ")),
    ["the suite was killed", "the suite ran no"],
  );
});

Deno.test("the summary says whether the gate passed, and what is baselined and why", () => {
  const revisions = [
    run([
      tasksLifecycle(NO_TASKS),
      { scenario: "ping", scored: true, passed: true, checks: [{ id: "ping", status: "SUCCESS" }] },
    ]),
  ];
  const summary = summarize("Conformance", revisions, judge(revisions, [], [TASKS], []));
  assert.match(summary, /^Gate: passed\b/m);
  assert.match(summary, /^- 2026-07-28 tasks-lifecycle: 2 failures allowed: no tasks$/m);
  assert.match(
    summary,
    /^- \[not implemented\] 2026-07-28 tasks-lifecycle \(not scored: extension\) tasks-sync-tool-call FAILURE: Unknown tool: greet$/m,
  );

  const failing = summarize("Conformance", revisions, judge(revisions, [], [], []));
  assert.match(
    failing,
    /^Gate: FAILED \(2 problems, 0 stale baseline entries; allowed: 0 failures/m,
  );
  assert.match(failing, /^- \[problem\] 2026-07-28 tasks-lifecycle .* tasks-sync-tool-call/m);
});

Deno.test("judge fails a SKIPPED check of a claimed scenario, and a claimed scenario that did not run", () => {
  const claimed = [
    { revision: "2026-07-28", scenario: "sep-2640-skills-manifest", reason: "skills" },
    { revision: "2026-07-28", scenario: "sep-2640-skills-directory", reason: "skills" },
  ];
  const skipped = "Server did not declare the io.modelcontextprotocol/skills extension";
  const { problems } = judge(
    [
      run([
        {
          scenario: "sep-2640-skills-manifest",
          scored: false,
          notScoredReason: "extension",
          passed: true,
          checks: [
            { id: "sep-2640-skillmd-mimetype", status: "SKIPPED", message: skipped },
            { id: "wire-schema-valid", status: "SUCCESS" },
          ],
        },
        // Not claimed: its skipped checks are no problem.
        {
          scenario: "sep-2640-skills-enumeration",
          scored: false,
          notScoredReason: "extension",
          passed: true,
          checks: [{ id: "sep-2640-skills-list-implemented", status: "SKIPPED" }],
        },
      ]),
      // Claimed at 2026-07-28 only: the other revision may skip it.
      {
        ...run([{
          scenario: "sep-2640-skills-manifest",
          scored: false,
          passed: true,
          checks: [{ id: "sep-2640-skillmd-mimetype", status: "SKIPPED" }],
        }]),
        revision: "2025-11-25",
      },
    ],
    [],
    [],
    claimed,
  );
  assert.deepEqual(problems.map((p) => `${p.revision} ${p.scenario} ${p.check} ${p.status}`), [
    "2026-07-28 sep-2640-skills-directory - -",
    "2026-07-28 sep-2640-skills-manifest sep-2640-skillmd-mimetype SKIPPED",
  ]);
  assert.match(problems[1].message, /claimed scenario \(skills\).*did not declare/);
});
