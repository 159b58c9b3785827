/**
 * The bare handler of `anubis_http.ts` with telemetry on: the
 * `@anubis/telemetry` middleware, and Deno's built-in OpenTelemetry
 * exporting to `OTEL_EXPORTER_OTLP_ENDPOINT` (a collector, or
 * `otlp_sink.ts`, started outside the measured process tree). Deno reads
 * `OTEL_DENO` only at start, so without it this script runs itself again
 * with it set, and passes the child's stderr through: the child is a live
 * descendant, so its CPU time counts in the A/B.
 *
 * ```sh
 * deno run -A bench/servers/otlp_sink.ts &     # prints its endpoint
 * OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 \
 *   deno task bench:ab .:bench/servers/anubis_http.ts .:bench/servers/anubis_http_otel.ts
 * ```
 *
 * @module
 */

import { defineServer } from "@anubis/core";
import { telemetry } from "@anubis/telemetry";
import { createHttpHandler } from "@anubis/transport-http";
import server from "./echo_server.ts";
import { serveBench } from "./listening.ts";

// `--api-only`: the middleware on the API's no-op providers (Deno's OpenTelemetry off);
// `--runtime-only`: Deno's OpenTelemetry on (its HTTP server spans) without the middleware;
// `--active-span`: the middleware's `activeSpan` option on; `--child-span`: a span of its
// own under Deno's HTTP span (`httpSpan: "child"`); `--no-operation-metric`: no per-call
// histogram (`operationMetric: false`);
// an `OTEL_NAME=value` argument sets that variable in the traced child (to compare
// settings in one run: OTEL_DENO_METRICS=false, OTEL_TRACES_SAMPLER=..., a protocol).
const apiOnly = Deno.args.includes("--api-only");
const runtimeOnly = Deno.args.includes("--runtime-only");
const settings = Object.fromEntries(
  Deno.args.filter((arg) => /^OTEL_[A-Z_]+=/.test(arg)).map((arg) => {
    const at = arg.indexOf("=");
    return [arg.slice(0, at), arg.slice(at + 1)];
  }),
);
if (!apiOnly && Deno.env.get("OTEL_DENO") !== "true") {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--config",
      new URL("../../deno.json", import.meta.url).pathname,
      new URL(import.meta.url).pathname,
      ...Deno.args,
    ],
    env: { OTEL_DENO: "true", OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf", ...settings },
    stdin: "null",
    stdout: "inherit",
    stderr: "inherit",
  }).spawn();
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    Deno.addSignalListener(signal, () => child.kill(signal));
  }
  Deno.exit((await child.status).code);
}

const traced = runtimeOnly ? server : defineServer({
  ...server.definition,
  middleware: [telemetry({
    activeSpan: Deno.args.includes("--active-span"),
    httpSpan: Deno.args.includes("--child-span") ? "child" : "annotate",
    operationMetric: !Deno.args.includes("--no-operation-metric"),
  })],
});
serveBench("anubis-otel", createHttpHandler(traced));
