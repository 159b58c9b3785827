/**
 * What telemetry costs over stdio: `cli serve` of the echo server, off and
 * with Deno's OpenTelemetry (`OTEL_DENO=true`, so the cli adds the telemetry
 * middleware; there is no HTTP span on stdio), and with metrics only
 * (`OTEL_DENO_TRACING=false`), taken in turn for several rounds; prints the
 * median server CPU per round trip (from `/proc`) and its ratio to off.
 * Exports go to `OTEL_EXPORTER_OTLP_ENDPOINT`: start `servers/otlp_sink.ts`
 * (or a collector) first.
 *
 * ```sh
 * deno run -A bench/servers/otlp_sink.ts --port=4318 &
 * OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 deno run -A bench/stdio_telemetry.ts [ROUNDS]
 * ```
 *
 * @module
 */

import { median } from "./measurement.ts";
import { loadStdio } from "./stdio_load.ts";

const ARGS = ["run", "-A", "cli/main.ts", "serve", "bench/servers/echo_server.ts"];
const VARIANTS: readonly [string, Readonly<Record<string, string>>][] = [
  ["off", {}],
  ["OTEL_DENO=true", { OTEL_DENO: "true" }],
  ["OTEL_DENO=true OTEL_DENO_TRACING=false", { OTEL_DENO: "true", OTEL_DENO_TRACING: "false" }],
];

if (import.meta.main) {
  const rounds = Number(Deno.args[0] ?? 4);
  const cpu = new Map<string, number[]>(VARIANTS.map(([label]) => [label, []]));
  for (let round = 0; round < rounds; round++) {
    for (const [label, env] of VARIANTS) {
      // The child inherits this process's environment.
      for (const name of ["OTEL_DENO", "OTEL_DENO_TRACING"]) Deno.env.delete(name);
      for (const [name, value] of Object.entries(env)) Deno.env.set(name, value);
      const measured = await loadStdio(ARGS, { connections: 32, seconds: 3, warmupSeconds: 1 });
      cpu.get(label)!.push(measured.cpuUsPerRequest!);
    }
  }
  const off = median(cpu.get("off")!);
  console.log(`stdio, 32 in flight, ${rounds} rounds of 3 s in turn; server CPU per round trip`);
  for (const [label, values] of cpu) {
    const ratio = (median(values) / off).toFixed(2);
    console.log(
      `${label}  ${median(values).toFixed(1)} µs  (${ratio}× off)  [${
        values.map((value) => value.toFixed(1)).join(" ")
      }]`,
    );
  }
}
