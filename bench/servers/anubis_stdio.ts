/**
 * The echo server on stdio through `serveStdio`, as `cli serve` runs it but
 * with the telemetry middleware chosen here, not by `OTEL_DENO`:
 * `--telemetry` puts `telemetry()` first; `--import-telemetry` loads
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
    served = defineServer({ ...server.definition, middleware: [telemetry()] });
  }
}
await serveStdio(served);
