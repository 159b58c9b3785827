/**
 * Turns measurements into the RESULTS tables: one table per benchmark, a
 * ratio column per baseline measured in the same run, and the targets with
 * whether each holds.
 *
 * @module
 */

import { clientShare, isClientBound, isServerBound, type Measurement } from "./measurement.ts";

/** One line of a table: a measurement, or why there is none. */
export interface Row {
  /** Who was measured. */
  name: string;
  /** The numbers, when the run worked. */
  result?: Measurement;
  /** A number that is not a rate (bytes per session, milliseconds to start). */
  value?: number;
  /** Why there is no result, or a remark. */
  note?: string;
}

/** One benchmark: its rows and the rows the others are divided by. */
export interface Table {
  /** Short key used by targets. */
  key: string;
  /** The heading. */
  title: string;
  /** What was run. */
  setup: string;
  /** The rows. */
  rows: Row[];
  /** Names of rows every other row is compared with. */
  baselines: string[];
  /** For tables of `value`s: the column heading (rates are the default). */
  valueLabel?: string;
  /** How values are printed. */
  format?: (value: number) => string;
}

/** A goal from the issue, checked against one run. */
export interface Target {
  /** The goal as the issue states it. */
  label: string;
  /** The table. */
  table: string;
  /** The row measured. */
  row: string;
  /** The row it is divided by; absent for an absolute goal. */
  baseline?: string;
  /** Holds when the ratio (or value) is at least this. */
  atLeast?: number;
  /** Holds when the ratio (or value) is at most this. */
  atMost?: number;
}

/** The figure a row is compared by: its rate, or its value. */
function figure(row: Row | undefined): number | undefined {
  return row?.result?.rps ?? row?.value;
}

function fixed(n: number, digits = 2): string {
  return n >= 100 ? Math.round(n).toLocaleString("en-US") : n.toFixed(digits);
}

/** Server CPU time per request of a row, when measured. */
const cpuOf = (row: Row | undefined) => row?.result?.cpuUsPerRequest;

/** Whether a row's rate was set by its load generator (see `isClientBound`). */
const clientBound = (row: Row | undefined) => row?.result ? isClientBound(row.result) : false;

/**
 * One ratio cell: the row's rate over the baseline's and, where both have
 * it, the baseline's server CPU per request over the row's (both read
 * "higher is better"). When either run was client-bound the rate ratio
 * measured the load generator, so the cell says so instead of a number.
 */
function ratioCell(row: Row, base: Row | undefined): string {
  const mine = figure(row);
  const theirs = figure(base);
  if (mine === undefined || theirs === undefined || row.name === base?.name) return "–";
  const rate = clientBound(row) || clientBound(base)
    ? "client-bound"
    : `${(mine / theirs).toFixed(2)}×`;
  const cpu = cpuOf(row) && cpuOf(base) ? ` (CPU ${(cpuOf(base)! / cpuOf(row)!).toFixed(2)}×)` : "";
  return rate + cpu;
}

/**
 * Renders a table as Markdown.
 *
 * @param table The table.
 * @returns Markdown lines.
 */
export function renderTable(table: Table): string {
  const byName = new Map(table.rows.map((row) => [row.name, row]));
  const baselines = table.baselines.filter((name) => figure(byName.get(name)) !== undefined);
  const isValue = table.valueLabel !== undefined;
  const withCpu = table.rows.some((row) => row.result?.cpuUsPerRequest !== undefined);
  const withClient = table.rows.some((row) => row.result?.clientCpuUs !== undefined);
  const withThread = table.rows.some((row) => row.result?.serverThreadShare !== undefined);
  const withChecks = table.rows.some((row) => row.result?.checked !== undefined);
  const head = isValue ? [table.valueLabel!] : [
    "req/s",
    "p50 ms",
    "p99 ms",
    ...(withCpu ? ["server CPU µs/req"] : []),
    ...(withThread ? ["server event loop busy"] : []),
    ...(withClient ? ["client CPU (share of its cores)"] : []),
    "errors",
    ...(withChecks ? ["bad bodies / checked"] : []),
  ];
  const lines = [
    `### ${table.title}`,
    "",
    table.setup,
    "",
    `| | ${[...head, ...baselines.map((b) => `vs ${b}`), "note"].join(" | ")} |`,
    `|${"---|".repeat(head.length + baselines.length + 2)}`,
  ];
  for (const row of table.rows) {
    const result = row.result;
    const cells = isValue
      ? [row.value === undefined ? "–" : (table.format ?? fixed)(row.value)]
      : result
      ? [
        fixed(result.rps, 0),
        result.p50Ms.toFixed(2),
        result.p99Ms.toFixed(2),
        ...(withCpu ? [result.cpuUsPerRequest?.toFixed(1) ?? "–"] : []),
        ...(withThread ? [threadCell(result)] : []),
        ...(withClient ? [clientCell(result)] : []),
        String(result.errors),
        ...(withChecks
          ? [result.checked === undefined ? "–" : `${result.badBodies ?? 0} / ${result.checked}`]
          : []),
      ]
      : head.map(() => "–");
    for (const baseline of baselines) cells.push(ratioCell(row, byName.get(baseline)));
    const bad = result?.firstBadBody ? `first bad body: ${result.firstBadBody}` : undefined;
    cells.push([row.note, bad].filter(Boolean).join("; ").replaceAll("|", "\\|"));
    lines.push(`| ${row.name} | ${cells.join(" | ")} |`);
  }
  return lines.join("\n");
}

function threadCell(result: Measurement): string {
  if (result.serverThreadShare === undefined) return "–";
  const flag = isServerBound(result) ? " **server-bound**" : "";
  return `${Math.round(result.serverThreadShare * 100)}%${flag}`;
}

function clientCell(result: Measurement): string {
  const share = clientShare(result);
  if (share === undefined) return "–";
  const cores = result.clientCores === 1 ? "1 core" : `${result.clientCores} cores`;
  const flag = isClientBound(result) ? " **client-bound**" : "";
  return `${Math.round(share * 100)}% of ${cores}${flag}`;
}

/**
 * Rows whose checked bodies failed, as `name: count` lines (empty when
 * every checked body was right).
 *
 * @param tables The tables of a run.
 * @returns One line per failing row.
 */
export function badBodies(tables: Table[]): string[] {
  return tables.flatMap((table) =>
    table.rows.filter((row) => (row.result?.badBodies ?? 0) > 0)
      .map((row) => `${table.title}: ${row.name}: ${row.result!.badBodies} bad bodies`)
  );
}

/** A target's outcome. */
export interface Outcome {
  /** The target. */
  target: Target;
  /** The measured ratio or value, when both rows were measured. */
  measured?: number;
  /** Whether it holds (undefined when not measured). */
  holds?: boolean;
  /**
   * The same comparison by server CPU time per request (baseline's over the
   * row's), when both rows have it: steadier than req/s on a busy machine.
   */
  byCpu?: number;
  /** Whether the target holds by CPU per request (undefined when not measured). */
  holdsByCpu?: boolean;
  /** Whether either row's rate was set by its load generator. */
  clientBound?: boolean;
}

const NONE: Measurement = { rps: 0, p50Ms: 0, p99Ms: 0, requests: 0, errors: 0 };

/**
 * Checks targets against the tables.
 *
 * @param tables The tables of this run.
 * @param targets The targets.
 * @returns One outcome per target.
 */
export function checkTargets(tables: Table[], targets: Target[]): Outcome[] {
  return targets.map((target) => {
    const table = tables.find((t) => t.key === target.table);
    const rowOf = (name?: string) => table?.rows.find((r) => r.name === name);
    const row = figure(rowOf(target.row));
    const base = target.baseline === undefined ? 1 : figure(rowOf(target.baseline));
    if (row === undefined || base === undefined) return { target };
    const measured = row / base;
    const holds = (target.atLeast === undefined || measured >= target.atLeast) &&
      (target.atMost === undefined || measured <= target.atMost);
    const rowCpu = rowOf(target.row)?.result?.cpuUsPerRequest;
    const baseCpu = rowOf(target.baseline)?.result?.cpuUsPerRequest;
    const byCpu = rowCpu && baseCpu ? baseCpu / rowCpu : undefined;
    const holdsByCpu = byCpu === undefined ? undefined : (target.atLeast === undefined ||
      byCpu >= target.atLeast) && (target.atMost === undefined || byCpu <= target.atMost);
    const clientBound = isClientBound(rowOf(target.row)?.result ?? { ...NONE }) ||
      isClientBound(rowOf(target.baseline)?.result ?? { ...NONE });
    return { target, measured, holds, byCpu, holdsByCpu, clientBound };
  });
}

/**
 * Renders target outcomes as a Markdown table.
 *
 * @param outcomes The outcomes.
 * @returns Markdown lines.
 */
export function renderOutcomes(outcomes: Outcome[]): string {
  const lines = [
    "| target | measured | holds | same comparison by server CPU per request | holds by CPU |",
    "|---|---|---|---|---|",
  ];
  for (const { target, measured, holds, byCpu, holdsByCpu, clientBound } of outcomes) {
    const shown = measured === undefined
      ? "not measured"
      : target.baseline === undefined
      ? fixed(measured)
      : `${measured.toFixed(2)}×`;
    const verdict = holds === undefined
      ? "–"
      : clientBound
      ? "client-bound: not a server ratio"
      : holds
      ? "yes"
      : "**no**";
    const cpuVerdict = holdsByCpu === undefined ? "–" : holdsByCpu ? "yes" : "**no**";
    const cpu = byCpu ? `${byCpu.toFixed(2)}×` : "–";
    lines.push(`| ${target.label} | ${shown} | ${verdict} | ${cpu} | ${cpuVerdict} |`);
  }
  return lines.join("\n");
}
