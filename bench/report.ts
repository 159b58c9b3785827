/**
 * Turns measurements into the RESULTS tables: one table per benchmark, a
 * ratio column per baseline measured in the same run, and the targets with
 * whether each holds.
 *
 * @module
 */

import type { Measurement } from "./measurement.ts";

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
  const head = isValue
    ? [table.valueLabel!]
    : ["req/s", "p50 ms", "p99 ms", ...(withCpu ? ["server CPU µs/req"] : []), "errors"];
  const lines = [
    `### ${table.title}`,
    "",
    table.setup,
    "",
    `| | ${[...head, ...baselines.map((b) => `vs ${b}`), "note"].join(" | ")} |`,
    `|${"---|".repeat(head.length + baselines.length + 2)}`,
  ];
  for (const row of table.rows) {
    const mine = figure(row);
    const cells = isValue
      ? [row.value === undefined ? "–" : (table.format ?? fixed)(row.value)]
      : row.result
      ? [
        fixed(row.result.rps, 0),
        row.result.p50Ms.toFixed(2),
        row.result.p99Ms.toFixed(2),
        ...(withCpu ? [row.result.cpuUsPerRequest?.toFixed(1) ?? "–"] : []),
        String(row.result.errors),
      ]
      : head.map(() => "–");
    for (const baseline of baselines) {
      const base = figure(byName.get(baseline));
      cells.push(
        mine === undefined || base === undefined || row.name === baseline
          ? "–"
          : `${(mine / base).toFixed(2)}×`,
      );
    }
    cells.push(row.note ?? "");
    lines.push(`| ${row.name} | ${cells.join(" | ")} |`);
  }
  return lines.join("\n");
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
}

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
    return { target, measured, holds, byCpu };
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
    "| target | measured | holds | same comparison by server CPU per request |",
    "|---|---|---|---|",
  ];
  for (const { target, measured, holds, byCpu } of outcomes) {
    const shown = measured === undefined
      ? "not measured"
      : target.baseline === undefined
      ? fixed(measured)
      : `${measured.toFixed(2)}×`;
    const verdict = holds === undefined ? "–" : holds ? "yes" : "**no**";
    lines.push(
      `| ${target.label} | ${shown} | ${verdict} | ${byCpu ? `${byCpu.toFixed(2)}×` : "–"} |`,
    );
  }
  return lines.join("\n");
}
