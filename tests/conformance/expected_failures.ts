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
 * The other way round, {@link CLAIMED} names the scenarios of features the
 * everything server declares: the suite skips their checks when the server
 * does not declare the feature, so there a SKIPPED check fails the run too
 * (the feature is claimed, so every check must decide), and so does a
 * claimed scenario that does not run.
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

/** A scenario of a feature the server declares, where every check must decide. */
export interface Claimed {
  /** The requirement set, e.g. `2026-07-28`. */
  revision: string;
  /** The scenario name. */
  scenario: string;
  /** What the server declares that the scenario tests. */
  reason: string;
}

/** The baseline of suite bugs: empty until one is found and written down here. */
export const EXPECTED_FAILURES: readonly ExpectedFailure[] = [];

/**
 * The scenarios of features we do not implement: empty since the tasks
 * extension (SEP-2663) landed; every scenario the suite runs passes.
 */
export const NOT_IMPLEMENTED: readonly NotImplemented[] = [];

const SKILLS = "the everything server declares the skills extension (SEP-2640) at 2026-07-28 " +
  "(2025-11-25 has no extensions)";

/**
 * The scenarios the everything server claims: a SKIPPED check in one of them
 * fails the run (the suite skips the checks of an extension the server does
 * not declare, and would count a server that stopped declaring it as clean).
 * `run.ts` runs those the requirement set does not name after it, unscored.
 */
export const CLAIMED: readonly Claimed[] = [
  { revision: "2026-07-28", scenario: "sep-2640-skills-enumeration", reason: SKILLS },
  { revision: "2026-07-28", scenario: "sep-2640-skills-manifest", reason: SKILLS },
  { revision: "2026-07-28", scenario: "sep-2640-skills-directory", reason: SKILLS },
];
