/**
 * The echo server on stdio through `serveStdio`, as `cli serve` runs it but
 * with the telemetry middleware chosen here, not by `OTEL_DENO`:
 * `--telemetry` puts `telemetry()` first (`--no-operation-metric`: with
 * `operationMetric: false`); `--import-telemetry` loads
 * `@anubis/telemetry` and leaves it unused (what importing it costs).
 *
 * @module
 */

import { defineServer } from "@anubis/core";
import { serveStdio } from "@anubis/transport-stdio";
import server from "./echo_server.ts";

let served = server;
if (Deno.args.includes("--telemetry") || Deno.args.includes("--import-telemetry")) {
  const { telemetry } = await import("@anubis/telemetry");
  if (Deno.args.includes("--telemetry")) {
    const operationMetric = !Deno.args.includes("--no-operation-metric");
    served = defineServer({ ...server.definition, middleware: [telemetry({ operationMetric })] });
  }
}
await serveStdio(served);
