/**
 * What telemetry costs, in one run with one set of OpenTelemetry settings
 * (Deno's OpenTelemetry on through `OTEL_DENO=true`, its default sampler,
 * OTLP/HTTP protobuf to `servers/otlp_sink.ts` on loopback, started here):
 *
 * - HTTP: the server with the `@anubis/telemetry` middleware against a raw
 *   `Deno.serve` answering the same JSON (`servers/raw_http.ts`), both with
 *   Deno's OpenTelemetry on (which makes an HTTP server span per request for
 *   both); the server without the middleware is shown too. Target: at most
 *   1.15× the raw server's CPU per request.
 * - stdio: `serveStdio` with the middleware against the same without it,
 *   both with Deno's OpenTelemetry on. Target: at most 1.15×.
 * - Off: Deno's OpenTelemetry off, the server with `@anubis/telemetry`
 *   imported and unused against the server that does not import it, over
 *   HTTP and stdio. Target: 1.00× (within noise).
 *
 * The servers of each group are taken in turn for several rounds (each
 * round starts one later); the figure is the median server CPU per request
 * (from `/proc`), which moves much less with the machine's load than
 * req/s. Differences under about 3% are noise on a shared 2-core machine.
 *
 * ```sh
 * deno run -A bench/telemetry_cost.ts [--rounds=8] [--seconds=2]
 * ```
 *
 * @module
 */

import { haveWrk, loadPost } from "./http_load.ts";
import { median } from "./measurement.ts";
import { cpuMicros, endAll, type RunningServer, startServer } from "./process.ts";
import { loadStdio } from "./stdio_load.ts";
import { statelessCall } from "./wire.ts";

function option(name: string, fallback: string): string {
  const found = Deno.args.find((arg) => arg.startsWith(`--${name}=`));
  return found === undefined ? fallback : found.slice(name.length + 3);
}

/** One contender: how to start it (or run a load against it) and its figures. */
interface Row {
  label: string;
  /** The environment it runs with (set in this process; children inherit it). */
  env: Record<string, string>;
  /** HTTP: the script and its arguments; stdio: the `deno` arguments. */
  args: string[];
  cpu: number[];
}

const OTEL_ON = { OTEL_DENO: "true" };
const OTEL_VARIABLES = ["OTEL_DENO"];

function setEnv(env: Record<string, string>): void {
  for (const name of OTEL_VARIABLES) Deno.env.delete(name);
  for (const [name, value] of Object.entries(env)) Deno.env.set(name, value);
}

const http = (
  label: string,
  env: Record<string, string>,
  script: string,
  ...flags: string[]
): Row => ({ label, env, args: ["run", "-A", `bench/servers/${script}`, ...flags], cpu: [] });
const stdio = (label: string, env: Record<string, string>, ...flags: string[]): Row => ({
  label,
  env,
  args: ["run", "-A", "bench/servers/anubis_stdio.ts", ...flags],
  cpu: [],
});

async function httpGroup(rows: Row[], rounds: number, seconds: number): Promise<void> {
  const servers: RunningServer[] = [];
  for (const row of rows) {
    setEnv(row.env);
    servers.push(await startServer(row.args));
  }
  const request = statelessCall();
  const shape = (seconds: number) => ({ connections: 32, seconds, warmupSeconds: 0 });
  for (const server of servers) await loadPost(server.url, request, shape(1)); // warm-up
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < rows.length; i++) {
      const at = (round + i) % rows.length;
      const before = cpuMicros(servers[at].pid);
      const measured = await loadPost(servers[at].url, request, shape(seconds));
      if (measured.requests === 0) throw new Error(`${rows[at].label} answered nothing`);
      rows[at].cpu.push((cpuMicros(servers[at].pid) - before) / measured.requests);
    }
  }
  for (const server of servers) await server.stop();
}

async function stdioGroup(rows: Row[], rounds: number, seconds: number): Promise<void> {
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < rows.length; i++) {
      const row = rows[(round + i) % rows.length];
      setEnv(row.env);
      const measured = await loadStdio(row.args, { connections: 32, seconds, warmupSeconds: 1 });
      row.cpu.push(measured.cpuUsPerRequest!);
    }
  }
}

function report(title: string, rows: Row[]): void {
  const base = median(rows[0].cpu);
  console.log(title);
  for (const { label, cpu } of rows) {
    console.log(
      `  ${label.padEnd(58)} ${median(cpu).toFixed(1).padStart(6)} µs  ${
        (median(cpu) / base).toFixed(2)
      }×  [${cpu.map((value) => value.toFixed(1)).join(" ")}]`,
    );
  }
}

async function main(): Promise<void> {
  const rounds = Number(option("rounds", "8"));
  const seconds = Number(option("seconds", "2"));
  if (!(await haveWrk())) throw new Error("wrk is missing: apt-get install -y wrk");
  const sink = await startServer(["run", "-A", "bench/servers/otlp_sink.ts", "--port=0"]);
  Deno.env.set("OTEL_EXPORTER_OTLP_ENDPOINT", sink.url.replace(/\/mcp$/, ""));
  Deno.env.set("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf");
  const groups: [string, Row[], "http" | "stdio"][] = [
    ["HTTP, stateless tools/call, OTEL_DENO=true (Deno's HTTP span in every row)", [
      http("raw Deno.serve", OTEL_ON, "raw_http.ts"),
      http("anubis, telemetry middleware", OTEL_ON, "anubis_http_otel.ts"),
      http(
        "anubis, telemetry, operationMetric: false",
        OTEL_ON,
        "anubis_http_otel.ts",
        "--no-operation-metric",
      ),
      http(
        "anubis, telemetry, httpSpan: child (a second span)",
        OTEL_ON,
        "anubis_http_otel.ts",
        "--child-span",
      ),
      http("anubis, no middleware", OTEL_ON, "anubis_http.ts"),
    ], "http"],
    ["stdio, 32 in flight, OTEL_DENO=true", [
      stdio("serveStdio, no middleware", OTEL_ON),
      stdio("serveStdio, telemetry middleware", OTEL_ON, "--telemetry"),
      stdio(
        "serveStdio, telemetry, operationMetric: false",
        OTEL_ON,
        "--telemetry",
        "--no-operation-metric",
      ),
    ], "stdio"],
    ["off (OTEL_DENO unset): @anubis/telemetry imported and unused vs not imported", [
      http("HTTP, not imported", {}, "anubis_http.ts"),
      http("HTTP, imported, unused", {}, "anubis_http_telemetry_unused.ts"),
    ], "http"],
    ["off, stdio", [
      stdio("stdio, not imported", {}),
      stdio("stdio, imported, unused", {}, "--import-telemetry"),
    ], "stdio"],
  ];
  try {
    for (const [, rows, kind] of groups) {
      if (kind === "http") await httpGroup(rows, rounds, seconds);
      else await stdioGroup(rows, Math.max(3, rounds >> 1), seconds);
    }
  } finally {
    await endAll();
  }
  console.log(`server CPU per request, medians of the rounds (first row of each group = 1×)`);
  for (const [title, rows] of groups) report(title, rows);
  console.log(`/proc/loadavg at the end: ${(await Deno.readTextFile("/proc/loadavg")).trim()}`);
}

if (import.meta.main) await main();
