/**
 * What the conformance gate lets fail, each with its reason. Everything else
 * fails the run: a FAILURE or a WARNING in any scenario, scored or not.
 *
 * - {@link EXPECTED_FAILURES}: single checks that are wrong in the pinned
 *   suite itself (never because our server is).
 * - {@link NOT_IMPLEMENTED}: whole scenarios, not scored by their requirement
 *   set, of a feature we do not implement. Their FAILUREs are allowed, except
 *   `wire-schema-valid` (every message we send must be valid); their WARNINGs
 *   are not.
 *
 * An entry that no longer allows anything (the check passes, the scenario runs
 * without a failure, or it no longer runs) fails the run as stale, so both
 * lists only shrink.
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

/** One scenario of a feature we do not implement. */
export interface NotImplemented {
  /** The requirement set, e.g. `2026-07-28`. */
  revision: string;
  /** The scenario name. */
  scenario: string;
  /** What is not implemented. */
  reason: string;
}

/** The baseline of suite bugs: empty until one is found and written down here. */
export const EXPECTED_FAILURES: readonly ExpectedFailure[] = [];

/**
 * The scenarios of features we do not implement: empty since the tasks
 * extension (SEP-2663) landed; every scenario the suite runs passes.
 */
export const NOT_IMPLEMENTED: readonly NotImplemented[] = [];
