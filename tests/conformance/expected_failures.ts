/**
 * Conformance checks that are allowed to fail, because the check itself is
 * wrong in the pinned suite (never because our server is). Each entry says
 * why, next to it. An entry that stops failing fails the run (stale), so
 * this list only shrinks.
 *
 * @module
 */

/** One baselined check. */
export interface ExpectedFailure {
  /** The requirement set, e.g. `2026-07-28`. */
  revision: string;
  /** The scenario name. */
  scenario: string;
  /** The check id. */
  check: string;
  /** Why the suite is wrong here. */
  reason: string;
}

/** The baseline: empty until a suite bug is found and written down here. */
export const EXPECTED_FAILURES: readonly ExpectedFailure[] = [];
